// `backup FILE`: a consistent copy of the database, taken while fieldgate runs. Copying the file itself is not safe:
// in WAL mode the latest commits live in the -wal file beside it, and a copy taken mid-checkpoint is torn.
import { CommandError, UsageError, type Command } from "../types.ts";
import { messageOf } from "../text.ts";

const cannotWrite = (path: string, error: unknown) =>
  new CommandError(`cannot write ${path}: ${messageOf(error)}`);
const OWN_SUFFIXES = ["", "-wal", "-shm", "-journal"];

export const backup: Command = {
  name: "backup",
  summary: "write a consistent copy of the database to FILE (safe while the server runs)",
  positionals: ["FILE"],
  flags: {},
  validate(args) {
    if (args.positionals[0]!.trim() === "") throw new UsageError("FILE must name the backup file to create");
  },
  async run({ args, config, store, deps }) {
    const path = args.positionals[0]!;
    if (!store.maintenance) {
      throw new UsageError("backup copies a SQLite file; back up a PostgreSQL database with pg_dump (docs/operations.md)");
    }
    const { maintenance } = store;
    // The live database's own -wal, -shm or -journal name: while fieldgate is stopped it does not exist, the copy
    // went in, and the next open of the database took it for its journal and deleted it. Compared as canonical
    // paths: "./x/fg.db-journal", an absolute path or one through a symlinked directory name the same file. SQLite
    // keeps those files beside the database's real file, so that is the name they are derived from.
    const [target, database] = await Promise.all([deps.canonicalPath(path), deps.canonicalPath(config.dbPath)]);
    if (OWN_SUFFIXES.some((suffix) => target === database + suffix)) {
      throw new UsageError(`${path} is one of the database's own files; choose a new file name`);
    }
    // Created here, exclusively and private (mode 0600: the copy holds password hashes and secret digests), so an
    // existing file, even an empty one SQLite would accept, is never overwritten: an older backup is worth keeping.
    let created: boolean;
    try {
      created = await deps.createPrivateFile(path);
    } catch (error) {
      throw cannotWrite(path, error);
    }
    if (!created) throw new UsageError(`${path} already exists; choose a new file name`);
    try {
      await maintenance.backupTo(path);
    } catch (error) {
      // A half-written copy (a full disk) must not pass for a backup.
      await deps.removeFile(path);
      throw cannotWrite(path, error);
    }
    return {
      json: { backup: path, database: config.dbPath },
      text: `Backed up ${config.dbPath} to ${path}. To restore: stop fieldgate, then put the copy in the database's place ` +
        "(and remove the old file's -wal and -shm files).\n",
    };
  },
};
