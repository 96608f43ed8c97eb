import Foundation
import LanyardProviders
import LanyardSupport
import LanyardWire
import Logging

/// The bridge's verifier (reference section 24), as `ProviderTokens` is the ID tokens': turns its failures into
/// catalogue errors and says why a session was refused in the log (reason, source, `kid`; never the token) and on
/// the console's Providers page.
public struct LegacySessions: Sendable {
    let verifier: LegacySessionVerifier
    public let refusals = TokenRefusals()
    let logger: Logger
    let clock: any LanyardClock

    public init(verifier: LegacySessionVerifier, clock: any LanyardClock, logger: Logger = Logger(label: "lanyard.bridge")) {
        self.verifier = verifier
        self.clock = clock
        self.logger = logger
    }

    /// The sources configured.
    public var offered: [LegacySource] { LegacySource.allCases.filter(verifier.offers) }

    public var settings: MigrationSettings { verifier.settings }

    func verify(_ token: String, source: LegacySource) async throws(LanyardError) -> VerifiedLegacySession {
        guard verifier.offers(source) else { throw .unsupportedProvider(source.rawValue) }
        do {
            return try await verifier.verify(token, source: source)
        } catch let error as ProviderTokenError {
            let provider = Provider(rawValue: source.rawValue)
            let keyID = CompactJWS(token)?.keyID.map { kid in
                String(kid.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "._~+/=-".contains($0)) }.prefix(100))
            }
            refusals.record(.init(at: clock.now(), reason: error.reason.rawValue, keyID: keyID), for: provider)
            logger.notice("legacy session refused", metadata: [
                "source": "\(source.rawValue)", "reason": "\(error.reason.rawValue)", "kid": "\(keyID ?? "none")"])
            throw .invalidProviderToken(reason: error.reason.rawValue)
        } catch {
            throw .providerUnavailable(source.rawValue)
        }
    }
}
