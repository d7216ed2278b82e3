#include <sqlite3.h>

/// Turns SQLite's memory statistics off (`SQLITE_CONFIG_MEMSTATUS`): with them on, every
/// allocation of every connection takes one process-wide mutex. `sqlite3_config` takes variable
/// arguments, which Swift cannot pass. Takes effect only before SQLite initializes (the first
/// database opened); returns `SQLITE_MISUSE` after.
static inline int instant_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
