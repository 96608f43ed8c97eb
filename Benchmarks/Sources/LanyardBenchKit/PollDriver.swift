import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs one closed-loop phase on the calling thread: one blocking-write, non-blocking-read TCP connection per
/// worker, all watched by one `poll` call. A request goes out as soon as the worker's previous answer is in.
final class PollDriver {
    struct Outcome: Sendable {
        var ok = 0
        var errors = 0
        var latencies: [Double] = []
        var firstErrors: [String] = []
        var elapsedSeconds = 0.0
    }

    /// Answers still missing this long after the phase's time is up count as errors.
    static let answerTimeoutNanoseconds: UInt64 = 30_000_000_000

    private let host: String
    private let port: UInt16
    private let concurrency: Int
    private let count: Int
    private let maxSeconds: Double

    private var sockets: [Int32]
    private var buffers: [[UInt8]]
    private var sentAt: [UInt64]
    private var next = 0
    private var active = 0
    private var deadline: UInt64 = 0
    private var outcome = Outcome()

    init(host: String, port: UInt16, concurrency: Int, count: Int, maxSeconds: Double) {
        self.host = host
        self.port = port
        self.concurrency = concurrency
        self.count = count
        self.maxSeconds = maxSeconds
        sockets = Array(repeating: -1, count: concurrency)
        buffers = Array(repeating: [], count: concurrency)
        sentAt = Array(repeating: 0, count: concurrency)
    }

    func run(_ scenario: some Scenario) -> Outcome {
        let start = Self.now()
        deadline = start + UInt64(maxSeconds * 1e9)
        active = concurrency
        for worker in 0..<concurrency { sendNext(worker: worker, scenario) }
        var watched = [pollfd](repeating: pollfd(), count: concurrency)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while active > 0 {
            for worker in 0..<concurrency {
                watched[worker] = pollfd(fd: sockets[worker], events: Int16(POLLIN), revents: 0)
            }
            let ready = poll(&watched, nfds_t(concurrency), 200)
            if ready < 0 && errno != EINTR { fail("poll: errno \(errno)"); break }
            if ready > 0 {
                for worker in 0..<concurrency where watched[worker].fd >= 0 && watched[worker].revents != 0 {
                    receive(worker: worker, chunk: &chunk, scenario)
                }
            }
            if Self.now() > deadline + Self.answerTimeoutNanoseconds {
                for worker in 0..<concurrency where sockets[worker] >= 0 {
                    fail("no answer within 30 s")
                    disconnect(worker: worker)
                }
                break
            }
        }
        outcome.elapsedSeconds = Double(Self.now() - start) / 1e9
        return outcome
    }

    private func receive(worker: Int, chunk: inout [UInt8], _ scenario: some Scenario) {
        let socket = sockets[worker]
        guard socket >= 0 else { return }
        var atEOF = false
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if received > 0 {
                buffers[worker] += chunk[0..<received]
            } else if received == 0 {
                atEOF = true
                break
            } else {
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                if errno == EINTR { continue }
                atEOF = true
                break
            }
        }
        switch HTTPWire.parse(buffers[worker], atEOF: atEOF) {
        case .incomplete:
            guard atEOF else { return }
            fail("connection closed before the answer was complete")
            disconnect(worker: worker)
        case .malformed(let reason):
            fail(reason)
            disconnect(worker: worker)
        case .complete(let response, let consumed):
            let latency = Double(Self.now() - sentAt[worker]) / 1e6
            buffers[worker].removeFirst(consumed)
            if scenario.record(worker: worker, status: response.status, body: response.body) {
                outcome.ok += 1
                outcome.latencies.append(latency)
            } else {
                fail("\(response.status) \(String(decoding: response.body.prefix(200), as: UTF8.self))")
            }
            if response.closes || atEOF { disconnect(worker: worker) }
        }
        sendNext(worker: worker, scenario)
    }

    /// Sends the worker's next request, or retires the worker when the phase is over.
    private func sendNext(worker: Int, _ scenario: some Scenario) {
        let iteration = next
        guard Self.now() < deadline, iteration < count, let request = scenario.request(worker: worker, iteration: iteration) else {
            disconnect(worker: worker)
            active -= 1
            return
        }
        next += 1
        if sockets[worker] < 0 {
            guard connect(worker: worker) else {
                fail("cannot connect to \(host):\(port): errno \(errno)")
                active -= 1
                return
            }
        }
        let bytes = HTTPWire.requestBytes(request, host: "\(host):\(port)")
        sentAt[worker] = Self.now()
        guard writeAll(bytes, to: sockets[worker]) else {
            fail("write failed: errno \(errno)")
            disconnect(worker: worker)
            sendNext(worker: worker, scenario)
            return
        }
    }

    private func connect(worker: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        var noDelay: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            return false
        }
        sockets[worker] = socket
        buffers[worker] = []
        return true
    }

    private func disconnect(worker: Int) {
        guard sockets[worker] >= 0 else { return }
        close(sockets[worker])
        sockets[worker] = -1
        buffers[worker] = []
    }

    private func writeAll(_ bytes: [UInt8], to socket: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                send(socket, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    private func fail(_ message: String) {
        outcome.errors += 1
        if outcome.firstErrors.count < 3 { outcome.firstErrors.append(message) }
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
