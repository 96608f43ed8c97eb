import Foundation
import LanyardSupport
import NIOCore
import NIOPosix
import NIOSSL

/// Why a mail was not handed over. `permanent` failures (a 5xx answer, a server without STARTTLS) are not retried.
public struct SMTPFailure: Error, Sendable, CustomStringConvertible {
    public var permanent: Bool
    public var description: String

    public init(permanent: Bool, _ description: String) {
        self.permanent = permanent
        self.description = description
    }
}

/// Hands one mail to an SMTP server (RFC 5321) and insists on TLS: `smtp://` must be upgraded with STARTTLS (a server
/// that does not offer it gets nothing: no `MAIL FROM`, no credentials), `smtps://` speaks TLS from the first byte,
/// and certificates are verified against the system's CAs and `LANYARD_SMTP_CA_FILE`. AUTH PLAIN or LOGIN, only
/// over TLS. Every answer is awaited with a timeout.
public struct SMTPClient: Sendable {
    let endpoint: SMTPEndpoint
    let tls: NIOSSLContext?
    let heloName: String
    let timeout: TimeAmount
    let group: any EventLoopGroup

    public init(endpoint: SMTPEndpoint, caFile: String?, heloName: String = "lanyard.localhost",
                timeout: TimeInterval = 30, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.endpoint = endpoint
        self.heloName = heloName
        self.timeout = .milliseconds(Int64(timeout * 1000))
        self.group = group
        if endpoint.security == .none {
            tls = nil
        } else {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .fullVerification
            configuration.minimumTLSVersion = .tlsv12
            if let caFile { configuration.additionalTrustRoots = [.file(caFile)] }
            tls = try NIOSSLContext(configuration: configuration)
        }
    }

    /// Sends `message` to `recipient`; returns the server's last answer to `DATA`.
    @discardableResult
    public func send(_ message: MailMessage, from sender: String, to recipient: String) async throws(SMTPFailure) -> String {
        let data: String
        do { data = try message.rendered(boundary: "lanyard-" + UUID().uuidString.lowercased()) } catch {
            throw SMTPFailure(permanent: true, "\(error)")
        }
        let connection: SMTPConnection
        do {
            connection = try await connect()
        } catch {
            throw SMTPFailure(permanent: false, "could not connect to \(endpoint.host):\(endpoint.port): \(Self.describe(error))")
        }
        do {
            let answer = try await conversation(on: connection, data: data, from: sender, to: recipient)
            connection.close()
            return answer
        } catch let failure as SMTPFailure {
            connection.close()
            throw failure
        } catch {
            connection.close()
            throw SMTPFailure(permanent: false, Self.describe(error))
        }
    }

    private func connect() async throws -> SMTPConnection {
        let implicit = endpoint.security == .implicitTLS ? tls : nil
        let host = endpoint.host
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let implicit {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: implicit, serverHostname: Self.sniName(host)))
                    }
                    try channel.pipeline.syncOperations.addHandler(SMTPReplyReader(), name: SMTPReplyReader.name)
                }
            }
            .connect(host: host, port: endpoint.port).get()
        return SMTPConnection(channel: channel, timeout: timeout)
    }

    private func conversation(on connection: SMTPConnection, data: String, from sender: String,
                              to recipient: String) async throws -> String {
        try await connection.expect(220, after: nil)
        var features = try await connection.expect(250, after: "EHLO \(heloName)").lines
        if endpoint.security == .startTLS {
            guard features.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                _ = try? await connection.command("QUIT")
                throw SMTPFailure(permanent: true, "\(endpoint.host) does not offer STARTTLS; nothing was sent")
            }
            try await connection.expect(220, after: "STARTTLS")
            guard let tls else { throw SMTPFailure(permanent: true, "no TLS context") }
            try await connection.startTLS(tls, serverHostname: Self.sniName(endpoint.host))
            features = try await connection.expect(250, after: "EHLO \(heloName)").lines
        }
        if let username = endpoint.username {
            try await authenticate(connection, username: username, password: endpoint.password ?? "", features: features)
        }
        // The failures name the command, not the addresses: they reach logs.
        try await connection.expect(250, after: "MAIL FROM:<\(sender)>", logAs: "MAIL FROM")
        try await connection.expect([250, 251], after: "RCPT TO:<\(recipient)>", logAs: "RCPT TO")
        try await connection.expect(354, after: "DATA")
        let stuffed = data.split(separator: "\r\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") ? "." + $0 : String($0) }.joined(separator: "\r\n")
        let accepted = try await connection.expect(250, after: stuffed + ".", logAs: "<message>")
        _ = try? await connection.command("QUIT")
        return accepted.lines.joined(separator: " ")
    }

    private func authenticate(_ connection: SMTPConnection, username: String, password: String,
                              features: [String]) async throws {
        let mechanisms = features.first { $0.uppercased().hasPrefix("AUTH") }
            .map { $0.uppercased().split(whereSeparator: { $0 == " " || $0 == "=" }).dropFirst().map(String.init) } ?? []
        if mechanisms.contains("PLAIN") || !mechanisms.contains("LOGIN") {
            let token = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
            try await connection.expect(235, after: "AUTH PLAIN \(token)", logAs: "AUTH PLAIN <credentials>")
        } else {
            try await connection.expect(334, after: "AUTH LOGIN")
            try await connection.expect(334, after: Data(username.utf8).base64EncodedString(), logAs: "<username>")
            try await connection.expect(235, after: Data(password.utf8).base64EncodedString(), logAs: "<password>")
        }
    }

    /// SNI carries names, not addresses.
    static func sniName(_ host: String) -> String? {
        host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? nil : host
    }

    static func describe(_ error: any Error) -> String {
        if let failure = error as? SMTPFailure { return failure.description }
        if let ssl = error as? NIOSSLError { return "TLS: \(ssl)" }
        if let ssl = error as? BoringSSLError { return "TLS: \(ssl)" }
        return String(describing: error).prefix(300).description
    }
}

/// One SMTP answer: its code and its lines' text.
struct SMTPReply: Sendable {
    var code: Int
    var lines: [String]
}

/// A connected channel and the replies its reader collects.
struct SMTPConnection: Sendable {
    let channel: any Channel
    let timeout: TimeAmount

    func close() {
        channel.close(promise: nil)
    }

    /// Sends `line` (or nothing, for the greeting) and waits for the next answer.
    @discardableResult
    func command(_ line: String?) async throws -> SMTPReply {
        let channel = self.channel
        let timeout = self.timeout
        return try await channel.eventLoop.flatSubmit { () -> EventLoopFuture<SMTPReply> in
            do {
                let reader = try channel.pipeline.syncOperations.handler(type: SMTPReplyReader.self)
                let reply = reader.nextReply(on: channel.eventLoop, timeout: timeout)
                if let line { channel.writeAndFlush(ByteBuffer(string: line + "\r\n"), promise: nil) }
                return reply
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.get()
    }

    /// Sends `line` and requires one of `codes`; a 5xx answer is a permanent failure, anything else temporary.
    /// `logAs` names the command in the failure without its arguments (credentials, the message).
    @discardableResult
    func expect(_ codes: Set<Int>, after line: String?, logAs: String? = nil) async throws -> SMTPReply {
        let reply = try await command(line)
        guard codes.contains(reply.code) else {
            let what = logAs ?? line.map { String($0.prefix(40)) } ?? "the greeting"
            throw SMTPFailure(permanent: (500..<600).contains(reply.code),
                              "\(what) was answered \(reply.code) \(reply.lines.joined(separator: " ").prefix(200))")
        }
        return reply
    }

    @discardableResult
    func expect(_ code: Int, after line: String?, logAs: String? = nil) async throws -> SMTPReply {
        try await expect([code], after: line, logAs: logAs)
    }

    /// Puts TLS in front of the reader, on the same connection (after `220` to STARTTLS).
    func startTLS(_ context: NIOSSLContext, serverHostname: String?) async throws {
        let channel = self.channel
        try await channel.eventLoop.submit {
            let handler = try NIOSSLClientHandler(context: context, serverHostname: serverHostname)
            try channel.pipeline.syncOperations.addHandler(handler, position: .first)
        }.get()
    }
}

/// Splits what the server sends into replies (multi-line: `250-…` until `250 …`) and hands each to the command
/// waiting for it; a reply that arrives before it is asked for (the greeting) waits in a queue.
final class SMTPReplyReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    static let name = "smtp-replies"
    private static let maxLine = 4096

    private var partial: [UInt8] = []
    private var lines: [String] = []
    private var ready: [Result<SMTPReply, any Error>] = []
    private var waiting: [EventLoopPromise<SMTPReply>] = []
    private var ended: (any Error)?

    func nextReply(on loop: any EventLoop, timeout: TimeAmount) -> EventLoopFuture<SMTPReply> {
        if !ready.isEmpty { return loop.makeCompletedFuture(ready.removeFirst()) }
        if let ended { return loop.makeFailedFuture(ended) }
        let promise = loop.makePromise(of: SMTPReply.self)
        waiting.append(promise)
        let deadline = loop.scheduleTask(in: timeout) {
            promise.fail(SMTPFailure(permanent: false, "no answer within \(timeout.nanoseconds / 1_000_000_000) s"))
        }
        promise.futureResult.whenComplete { _ in deadline.cancel() }
        return promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        partial += buffer.readBytes(length: buffer.readableBytes) ?? []
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            var line = Array(partial[..<newline])
            partial.removeSubrange(...newline)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            receive(String(decoding: line, as: UTF8.self))
        }
        if partial.count > Self.maxLine { fail(SMTPFailure(permanent: false, "an answer line is too long"), context) }
    }

    private func receive(_ line: String) {
        let bytes = Array(line.utf8)
        guard bytes.count >= 3, let code = Int(String(decoding: bytes[0..<3], as: UTF8.self)) else {
            deliver(.failure(SMTPFailure(permanent: false, "not an SMTP answer: \(line.prefix(80))")))
            return
        }
        lines.append(bytes.count > 4 ? String(decoding: bytes[4...], as: UTF8.self) : "")
        if bytes.count > 3, bytes[3] == UInt8(ascii: "-") { return }
        let reply = SMTPReply(code: code, lines: lines)
        lines = []
        deliver(.success(reply))
    }

    private func deliver(_ result: Result<SMTPReply, any Error>) {
        if waiting.isEmpty { ready.append(result) } else { waiting.removeFirst().completeWith(result) }
    }

    private func fail(_ error: any Error, _ context: ChannelHandlerContext) {
        ended = error
        let pending = waiting
        waiting = []
        pending.forEach { $0.fail(error) }
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended = ended ?? SMTPFailure(permanent: false, "the server closed the connection")
        let pending = waiting
        waiting = []
        pending.forEach { $0.fail(ended!) }
        context.fireChannelInactive()
    }
}
