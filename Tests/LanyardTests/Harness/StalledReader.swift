import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A client that sends one request and then never reads its answer: a phone gone to sleep with its socket open.
/// Its receive buffer is kept small, so the server's writes stall soon.
final class StalledReader: Sendable {
    private let descriptor: Int32

    init(port: Int, request: String) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSetupError("socket() failed") }
        var size: Int32 = 4096
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(descriptor); throw TestSetupError("connect() failed") }
        let bytes = Array(request.utf8)
        guard send(descriptor, bytes, bytes.count, 0) == bytes.count else { throw TestSetupError("send() failed") }
    }

    /// Whether the server closed the connection within `seconds`: reading what it sent until the end. What the
    /// server had queued before closing still arrives first, a buffer at a time, so an empty read alone is not a
    /// "no".
    func serverClosed(within seconds: Double = 5) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count == 0 { return true }
            if count < 0 {
                guard errno == EAGAIN || errno == EWOULDBLOCK else { return true }
                guard Date() < deadline else { return false }
                usleep(10_000)
            }
        }
    }

    deinit {
        close(descriptor)
    }
}
