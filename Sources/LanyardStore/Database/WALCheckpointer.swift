import CSQLite
import Foundation
import Synchronization

extension SQLiteDatabase {
    /// When the write-ahead log is copied into the database file, in pages of the log.
    public struct Checkpointing: Sendable {
        /// The log's size that wakes the checkpointing thread.
        public var background: Int32
        /// The log's size at which the writer copies it itself, should the thread fall behind.
        public var writer: Int32

        public init(background: Int32, writer: Int32) {
            self.background = background
            self.writer = writer
        }

        /// SQLite's default size (1,000 pages, 4 MB) for the thread; the writer steps in at 32 MB.
        public static let standard = Checkpointing(background: 1_000, writer: 8_000)

        /// The log file's size, in bytes, to cut it back to when it starts over, so a burst of writes does
        /// not leave it large on disk: twice the thread's threshold in SQLite's 4 KiB pages, which ordinary
        /// cycles stay under (extending a file costs more than writing over it).
        var logFileLimit: Int64 { Int64(background) * 2 * 4_096 }
    }

    /// Keeps the write-ahead log short without making the writer copy it. SQLite's default copies the log
    /// into the database file inside the commit that takes it past 1,000 pages, so every few hundred
    /// transactions one group commit waits for the copy (a few milliseconds, more as the threshold grows):
    /// most of the writes' p99. Here a thread with a connection of its own copies the log (a passive
    /// checkpoint, which neither waits for nor blocks the writer). The log starts over at the first write
    /// after it has been copied in full, so while commits keep coming the thread copies again after each one
    /// until it catches up; the few pages each time take a fraction of a millisecond.
    final class WALCheckpointer: @unchecked Sendable {
        private let sizes: Checkpointing
        private let connection: Connection
        private let wake = DispatchSemaphore(value: 0)

        struct State {
            /// The thread has been woken and not yet started copying.
            var requested = false
            /// `stop()` or `stopAndWait()` was called.
            var stopped = false
            /// The thread has closed its connection and ended.
            var finished = false
            /// Callers of `stopAndWait()` waiting for the thread to end.
            var waiting: [CheckedContinuation<Void, Never>] = []
        }

        private let state = Mutex(State())

        init(path: String, sizes: Checkpointing) throws {
            self.sizes = sizes
            connection = try Connection(path: path, readOnly: false)
            // A connection learns that the database keeps a log when it first reads it.
            try connection.execute("PRAGMA journal_mode = WAL")
            let thread = Thread { [self] in copyWhenWoken() }
            thread.name = "lanyard-sqlite-checkpoint"
            thread.start()
        }

        /// Takes over the writer's log hook (which turns off SQLite's own automatic checkpoints). The hook
        /// holds the checkpointer unretained: the database that owns both keeps it alive.
        func watch(_ writer: Connection) throws {
            try writer.execute("PRAGMA journal_size_limit = \(sizes.logFileLimit)")
            writer.setWALHook(context: Unmanaged.passUnretained(self).toOpaque()) { context, database, _, pages in
                guard let context else { return SQLITE_OK }
                Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().logGrew(to: pages, writer: database)
                return SQLITE_OK
            }
        }

        /// Called on the writer's thread after each commit, with the pages now in the log.
        private func logGrew(to pages: Int32, writer: OpaquePointer?) {
            if pages >= sizes.writer {
                Connection.checkpointPassively(writer)
                return
            }
            guard pages >= sizes.background else { return }
            let wakeThread = state.withLock { state -> Bool in
                if state.requested || state.stopped { return false }
                state.requested = true
                return true
            }
            if wakeThread { wake.signal() }
        }

        private func copyWhenWoken() {
            while true {
                wake.wait()
                let stopped = state.withLock { state -> Bool in
                    state.requested = false
                    return state.stopped
                }
                if stopped { break }
                connection.checkpointPassively()
            }
            connection.close()
            let waiting = state.withLock { state in
                state.finished = true
                return state.waiting
            }
            for caller in waiting { caller.resume() }
        }

        /// Ends the thread after the copy it may be making, without waiting for it. The writer must not commit
        /// afterwards.
        func stop() {
            state.withLock { $0.stopped = true }
            wake.signal()
        }

        /// Ends the thread and returns once its connection is closed.
        func stopAndWait() async {
            await withCheckedContinuation { (caller: CheckedContinuation<Void, Never>) in
                let finished = state.withLock { state -> Bool in
                    state.stopped = true
                    if !state.finished { state.waiting.append(caller) }
                    return state.finished
                }
                if finished { caller.resume() } else { wake.signal() }
            }
        }
    }
}
