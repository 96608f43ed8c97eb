import LanyardProviders
import LanyardWire

/// The configured providers as the admin API shows them: settings, keys held, the last failed key fetch, the last
/// refused token.
public struct ProviderStatus: Sendable {
    let providerTokens: ProviderTokens

    public init(_ dependencies: CoreDependencies) {
        providerTokens = dependencies.providerTokens
    }

    public func list() -> AdminProviderList {
        AdminProviderList(providers: providerTokens.keyStatus().map { settings, keys in
            AdminProvider(name: settings.provider.rawValue, displayName: settings.displayName, kind: settings.kind.rawValue,
                          issuer: Self.describe(settings.issuer), clientIDs: settings.clientIDs, keysURL: settings.jwksURL,
                          nonceRequired: settings.requiresNonce, keyIDs: keys.keyIDs, keysFetchedAt: keys.fetchedAt,
                          keysFreshUntil: keys.freshUntil,
                          lastError: keys.lastError.map { AdminProvider.KeyFailure(at: $0.at, message: $0.message) },
                          lastRefusal: providerTokens.refusals.last(for: settings.provider).map {
                              AdminProvider.TokenRefusal(at: $0.at, reason: $0.reason, kid: $0.keyID)
                          })
        })
    }

    static func describe(_ rule: ProviderSettings.IssuerRule) -> String {
        switch rule {
        case .oneOf(let issuers): issuers.joined(separator: ", ")
        case .microsoft(let tenants):
            MicrosoftTenants.issuer(tenant: "{tid}") + " (" + {
                switch tenants {
                case .any: "any tenant"
                case .consumers: "personal accounts"
                case .organizations: "work and school tenants"
                case .only(let ids): "tenants " + ids.sorted().joined(separator: ", ")
                }
            }() + ")"
        }
    }
}
