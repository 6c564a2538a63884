// `backup FILE`: a consistent copy of the database, taken while fieldgate runs. Copying the file itself is not safe:
// in WAL mode the latest commits live in the -wal file beside it, and a copy taken mid-checkpoint is torn.
import { CommandError, UsageError, type Command } from "../types.ts";

export const backup: Command = {
  name: "backup",
  summary: "write a consistent copy of the database to FILE (safe while the server runs)",
  positionals: ["FILE"],
  flags: {},
  validate(args) {
    if (args.positionals[0]!.trim() === "") throw new UsageError("FILE must name the backup file to create");
  },
  async run({ args, config, store }) {
    const path = args.positionals[0]!;
    try {
      await store.backupTo(path);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // Never overwritten: an older backup is worth keeping, and the name may be the live database's. SQLite
      // refuses an existing database ("output file already exists") and any other non-empty file ("not a database").
      if (/already exists|not a database/i.test(message)) throw new UsageError(`${path} already exists; choose a new file name`);
      throw new CommandError(`cannot write ${path}: ${message}`);
    }
    return {
      json: { backup: path, database: config.dbPath },
      text: `Backed up ${config.dbPath} to ${path}. To restore: stop fieldgate, then put the copy in the database's place ` +
        "(and remove the old file's -wal and -shm files).\n",
    };
  },
};
