import Foundation
import LanyardProviders
import LanyardSupport
import Logging

/// The configured providers and their verifier; turns provider failures into catalogue errors, and says why a
/// token was refused in the log (reason, provider, `kid`; never the token) and on the console's Providers page.
public struct ProviderTokens: Sendable {
    let verifier: IDTokenVerifier
    let settings: [Provider: ProviderSettings]
    /// Every provider as configured, in order: Apple, Google, then `LANYARD_OIDC_PROVIDERS`.
    public let all: [ProviderSettings]
    /// Those with at least one client ID: the ones offered.
    public let configured: [ProviderSettings]
    public let refusals = TokenRefusals()
    let logger: Logger
    let clock: any LanyardClock

    public init(verifier: IDTokenVerifier, settings: [ProviderSettings], clock: any LanyardClock = SystemClock(),
                logger: Logger = Logger(label: "lanyard.providers")) {
        self.verifier = verifier
        self.settings = Dictionary(settings.map { ($0.provider, $0) }, uniquingKeysWith: { first, _ in first })
        self.all = settings
        self.configured = settings.filter { !$0.clientIDs.isEmpty }
        self.clock = clock
        self.logger = logger
    }

    /// A refused token: logged and kept as the provider's last refusal.
    private func refused(_ token: String, provider: Provider, reason: String) -> LanyardError {
        // The header is the sender's: only the characters key ids are made of reach the log (no space, so a
        // `kid` cannot forge another field of the line).
        let keyID = CompactJWS(token)?.keyID.map { kid in
            String(kid.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "._~+/=-".contains($0)) }.prefix(100))
        }
        refusals.record(.init(at: clock.now(), reason: reason, keyID: keyID), for: provider)
        logger.notice("provider token refused", metadata: [
            "provider": "\(provider.rawValue)", "reason": "\(reason)", "kid": "\(keyID ?? "none")"])
        return .invalidProviderToken(reason: reason)
    }

    /// What is known of each offered provider's keys (the console's Providers page).
    public func keyStatus() -> [(settings: ProviderSettings, keys: KeySetStatus)] {
        configured.map { ($0, verifier.keyStatus($0)) }
    }

    public func verify(_ idToken: String, provider: Provider, nonce: String?) async throws(LanyardError) -> VerifiedIdentity {
        guard let settings = settings[provider], !settings.clientIDs.isEmpty else {
            throw .unsupportedProvider(provider.rawValue)
        }
        do {
            return try await verifier.verify(idToken, settings: settings, nonce: nonce)
        } catch let error as ProviderTokenError {
            throw refused(idToken, provider: provider, reason: error.reason.rawValue)
        } catch is ProviderUnavailableError {
            throw .providerUnavailable(settings.displayName)
        } catch {
            throw .providerUnavailable(settings.displayName)
        }
    }

    /// The claims of a JWS `provider` signed for one of its configured clients (Apple's notifications).
    public func verifySigned(_ token: String, provider: Provider) async throws(LanyardError) -> [String: JSONValue] {
        guard let settings = settings[provider], !settings.clientIDs.isEmpty else {
            throw .unsupportedProvider(provider.rawValue)
        }
        do {
            return try await verifier.verifyProviderJWS(token, settings: settings)
        } catch let error as ProviderTokenError {
            throw refused(token, provider: provider, reason: error.reason.rawValue)
        } catch {
            throw .providerUnavailable(settings.displayName)
        }
    }
}
