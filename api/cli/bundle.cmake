# xwires CLI: bundle and merge commands.
