import LanyardSupport
import Logging

public enum DatabaseFactory {
    /// Opens the database the configuration names (without migrating it).
    /// `poolSize` is the number of PostgreSQL connections and `timeout` how long a request waits for one; SQLite
    /// ignores both. `background` says who runs the database's `runBackgroundWork()`.
    public static func open(_ location: DatabaseLocation, poolSize: Int, timeout: Duration = .seconds(2),
                            background: BackgroundWork = .ownTask, logger: Logger) async throws -> any Database {
        switch location {
        case .sqliteFile(let path): try await SQLiteDatabase.open(path: path, logger: logger)
        case .sqliteMemory: try await SQLiteDatabase.open(path: nil, logger: logger)
        case .postgres(let postgres): try await PostgresDatabase.connect(postgres, connections: poolSize, timeout: timeout,
                                                                              background: background, logger: logger)
        }
    }
}
