/**
 * Private local files for the file-backed stores: directories created
 * `0o700` and checked to be directories owned by this process's user, files
 * created `0o600` and opened with `O_NOFOLLOW` (a symlink planted where a
 * store file belongs fails with `ELOOP` instead of being followed) and
 * checked to be regular files owned by this user (a hard link to someone
 * else's file is refused).
 *
 * @since 0.1.0
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, statSync } from "node:fs"
import { type FileHandle, open } from "node:fs/promises"
import { InvalidInput } from "./Errors.ts"

/** Default permission bits of created files: owner read/write. @category constants */
export const FILE_MODE = 0o600
/** Default permission bits of created directories: owner only. @category constants */
export const DIRECTORY_MODE = 0o700

const owner = (): number | undefined => process.geteuid?.()

/**
 * Creates `directory` (and missing parents) with `mode` and checks that it is
 * a directory owned by this process's effective user.
 *
 * @throws InvalidInput when it is not a directory or belongs to another user.
 * @category constructors
 */
export const ensureDirectory = (directory: string, mode: number = DIRECTORY_MODE): void => {
  mkdirSync(directory, { recursive: true, mode })
  const info = statSync(directory)
  if (!info.isDirectory()) {
    throw new InvalidInput({ what: "store directory", path: directory, detail: "is not a directory" })
  }
  const uid = owner()
  if (uid !== undefined && info.uid !== uid) {
    throw new InvalidInput({
      what: "store directory",
      path: directory,
      detail: `is owned by uid ${info.uid}, not by this process's uid ${uid}; another user could replace its files`
    })
  }
}

/**
 * Opens a store file without following a symlink: `append` opens it for
 * reading and appending (created with `mode` when missing), `read` for
 * reading only.
 *
 * @throws Error with code `ELOOP` for a symlink, `ENOENT` when missing (read),
 *   or `EPERM` when it is not a regular file owned by this user.
 * @category constructors
 */
export const openFile = async (
  path: string,
  access: "append" | "read",
  mode: number = FILE_MODE
): Promise<FileHandle> => {
  const flags =
    access === "append"
      ? constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW
      : constants.O_RDONLY | constants.O_NOFOLLOW
  const handle = await open(path, flags, mode)
  const info = await handle.stat()
  const uid = owner()
  if (!info.isFile() || (uid !== undefined && info.uid !== uid)) {
    await handle.close()
    const error: NodeJS.ErrnoException = new Error(
      `${path} is not a regular file owned by this user (uid ${info.uid}); refusing to use it`
    )
    error.code = "EPERM"
    throw error
  }
  return handle
}

/**
 * Creates `path` empty with `mode` unless it exists, then checks that it is a
 * regular file (not a symlink) owned by this user — for files another
 * library opens by name (the SQLite database).
 *
 * @throws InvalidInput when `path` is a symlink or not a regular file of this user.
 * @category constructors
 */
export const ensureFile = (path: string, mode: number = FILE_MODE): void => {
  try {
    // `wx` (O_CREAT | O_EXCL) never follows a symlink.
    closeSync(openSync(path, "wx", mode))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
  }
  const info = lstatSync(path)
  const uid = owner()
  if (!info.isFile() || (uid !== undefined && info.uid !== uid)) {
    throw new InvalidInput({
      what: "store file",
      path,
      detail: info.isSymbolicLink()
        ? "is a symbolic link; refusing to follow it"
        : `is not a regular file owned by this process's uid ${uid}`
    })
  }
}
