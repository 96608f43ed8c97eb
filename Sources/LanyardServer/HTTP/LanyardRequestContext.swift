import Hummingbird
import LanyardCore
import LanyardSupport
import struct LanyardWire.User
import Logging
import NIOCore

/// What a request carries through the middleware: its id, the peer's address, and what it earned on the way
/// (the caller a bearer proved, `BearerAuthentication`).
public struct LanyardRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The socket peer's IP; the client IP may differ behind a trusted proxy (see `ClientAddress`).
    public let peerAddress: String?
    public let requestID: String
    /// The connection, for long-lived answers that must close it themselves (a stream whose writes stalled).
    let channel: any Channel
    /// The caller the request's bearer proved, on routes behind `BearerAuthentication`.
    public internal(set) var caller: Caller?
    /// The caller's account, on routes that read it with the session (`.requiredReadingAccount`).
    public internal(set) var account: User?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
        self.channel = source.channel
        self.requestID = RequestIDs.next()
        self.logger[metadataKey: "request_id"] = .string(requestID)
    }

    /// The caller, on a route behind `BearerAuthentication`; `UNAUTHORIZED` anywhere else.
    public func requireCaller() throws -> Caller {
        guard let caller else { throw LanyardError.unauthorized }
        return caller
    }

    /// Bodies are read by `JSONBody` with the per-endpoint limit; this only bounds anything else.
    public var maxUploadSize: Int { JSONBody.authLimit }
}
