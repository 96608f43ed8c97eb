import Hummingbird
import LanyardCore
import LanyardWire

/// `GET /v1/providers`: the providers this server offers, so an app shows the right buttons (reference section 20).
struct ProviderRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        let offered = api.dependencies.providerTokens.configured.map {
            OfferedProvider(name: Provider(rawValue: $0.provider.rawValue), displayName: $0.displayName,
                            kind: OfferedProvider.Kind(rawValue: $0.kind.rawValue))
        } + (api.dependencies.offersEmail ? [OfferedProvider(name: Provider(rawValue: "email"), displayName: "Email", kind: .email)] : [])
            + (api.dependencies.offersPasskeys ? [OfferedProvider(name: .passkey, displayName: "Passkey", kind: .passkey)] : [])
        router.get("v1/providers") { _, _ in
            try JSONResponse.make(offered, headers: [.cacheControl: "public, max-age=300"])
        }
    }
}
