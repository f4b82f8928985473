"""The foundation every capability may import, and which imports no capability: the clock and time
formats, the error tree, logging, the watcher's secrets, the one loader for data from outside (with the
strict YAML reader under it) and the config-file loader, version schemes, the state database and its
schema, and progress output."""
