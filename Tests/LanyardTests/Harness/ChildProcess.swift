#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A child process started with `posix_spawn`, its standard output and error on pipes. Foundation's `Process.run`
/// crashed now and then in this busy test process (a `memcpy` fault while it set up the child, with other threads
/// opening and closing sockets, even with launches one at a time); `posix_spawn` itself reads nothing of the
/// parent's descriptors.
final class ChildProcess: @unchecked Sendable {
    /// Pipes are made and marked close-on-exec under this lock, so no other spawn inherits them half made.
    private static let spawning = NSLock()

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not
    /// import.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc 2.34 or later is needed to start child processes cleanly")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    let pid: pid_t
    let standardOutput: FileHandle
    let standardError: FileHandle
    private let lock = NSLock()
    private var waitStatus: Int32?

    init(executable: String, arguments: [String], environment: [String: String]) throws {
        var output: [Int32] = [0, 0], errors: [Int32] = [0, 0]
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned: Int32 = try Self.spawning.withLock {
            guard pipe(&output) == 0, pipe(&errors) == 0 else { throw TestSetupError("pipe failed: \(errno)") }
            for descriptor in output + errors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, output[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
            // Nothing else of this process reaches the child: not a socket of a test server, not a database
            // connection (a child holding one would keep it open after the test closed it).
            guard Self.addCloseFrom(&actions, 3) == 0 else { throw TestSetupError("cannot close descriptors in the child") }
            let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
            close(output[1])
            close(errors[1])
            return result
        }
        guard spawned == 0 else {
            close(output[0])
            close(errors[0])
            throw TestSetupError("posix_spawn of \(executable) failed: \(spawned)")
        }
        self.pid = pid
        standardOutput = FileHandle(fileDescriptor: output[0], closeOnDealloc: true)
        standardError = FileHandle(fileDescriptor: errors[0], closeOnDealloc: true)
    }

    /// Reaps the child when it has exited; its `waitpid` status.
    private func poll() -> Int32? {
        lock.withLock {
            if let waitStatus { return waitStatus }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { waitStatus = status }
            return waitStatus
        }
    }

    var isRunning: Bool { poll() == nil }

    /// The exit status, or -1 while it runs or when a signal ended it.
    var terminationStatus: Int32 {
        guard let status = poll(), status & 0x7f == 0 else { return -1 }
        return (status >> 8) & 0xff
    }

    /// Whether it exited by itself (rather than by a signal).
    var exitedNormally: Bool { poll().map { $0 & 0x7f == 0 } ?? false }

    /// SIGTERM.
    func terminate() { kill(pid, SIGTERM) }
}
