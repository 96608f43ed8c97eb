import LanyardStore
import ServiceLifecycle

/// The database's background work (`Database.runBackgroundWork()`: PostgreSQL's pool replacing lost connections
/// and refusing requests that waited too long) as a service of the server's `ServiceGroup`: it runs as long as
/// the server and stops at graceful shutdown, once the services started after it have stopped.
struct DatabaseService: Service {
    let database: any Database

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await database.runBackgroundWork()
        }
    }
}

/// ServiceLifecycle logs each service by its description (at `debug`): its name, never its stored keys and settings.
extension DatabaseService: CustomStringConvertible {
    var description: String { "DatabaseService" }
}
