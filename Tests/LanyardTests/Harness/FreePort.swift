import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Ports handed out so far in this test process: never handed out twice, so a server started after another one
/// stopped never takes its port, and no pooled client connection to the old server is mistaken for one to the new.
private let handedOut = Mutex<Set<Int>>([])

/// A TCP port on 127.0.0.1 that was free a moment ago, and not handed out before by this process. The server is
/// told its port up front because in dev mode it fetches the emulator's keys from itself.
func freeLoopbackPort() throws -> Int {
    for _ in 0..<100 {
        let port = try boundAndReleasedPort()
        if handedOut.withLock({ $0.insert(port).inserted }) { return port }
    }
    throw TestSetupError("no fresh loopback port in 100 tries")
}

private func boundAndReleasedPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestSetupError("socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw TestSetupError("bind() failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
