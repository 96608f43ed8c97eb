#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro Swift cannot import: SQLite copies the bound value. */
static inline void (*lanyard_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
