import Hummingbird
import LanyardCore
import LanyardSupport
import Logging
import NIOCore

/// What a request carries through the middleware: its id and the peer's address.
public struct LanyardRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The socket peer's IP; the client IP may differ behind a trusted proxy (see `ClientAddress`).
    public let peerAddress: String?
    public let requestID: String

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
        self.requestID = RequestIDs.next()
        self.logger[metadataKey: "request_id"] = .string(requestID)
    }

    /// Bodies are read by `JSONBody` with the per-endpoint limit; this only bounds anything else.
    public var maxUploadSize: Int { JSONBody.authLimit }
}
