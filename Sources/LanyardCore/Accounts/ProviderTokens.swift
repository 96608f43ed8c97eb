import Foundation
import LanyardProviders
import LanyardSupport

/// The configured providers and their verifier; turns provider failures into catalogue errors.
public struct ProviderTokens: Sendable {
    let verifier: IDTokenVerifier
    let settings: [Provider: ProviderSettings]

    public init(verifier: IDTokenVerifier, settings: [ProviderSettings]) {
        self.verifier = verifier
        self.settings = Dictionary(uniqueKeysWithValues: settings.map { ($0.provider, $0) })
    }

    /// The provider named in the path, if it is one Lanyard offers with this configuration.
    public func provider(named name: String) throws(LanyardError) -> Provider {
        guard let provider = Provider(rawValue: name), let settings = settings[provider], !settings.clientIDs.isEmpty else {
            throw .unsupportedProvider(name)
        }
        return provider
    }

    public var offered: [Provider] {
        Provider.allCases.filter { settings[$0].map { !$0.clientIDs.isEmpty } ?? false }
    }

    public func verify(_ idToken: String, provider: Provider, nonce: String?) async throws(LanyardError) -> VerifiedIdentity {
        guard let settings = settings[provider], !settings.clientIDs.isEmpty else {
            throw .unsupportedProvider(provider.rawValue)
        }
        do {
            return try await verifier.verify(idToken, settings: settings, nonce: nonce)
        } catch let error as ProviderTokenError {
            throw .invalidProviderToken(reason: error.reason.rawValue)
        } catch is ProviderUnavailableError {
            throw .providerUnavailable(provider.displayName)
        } catch {
            throw .providerUnavailable(provider.displayName)
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
            throw .invalidProviderToken(reason: error.reason.rawValue)
        } catch {
            throw .providerUnavailable(provider.displayName)
        }
    }
}
