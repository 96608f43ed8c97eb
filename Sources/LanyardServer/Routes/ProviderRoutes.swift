import Hummingbird
import LanyardCore
import LanyardWire

/// `GET /v1/providers`: the providers this server offers, so an app shows the right buttons (reference section 20).
struct ProviderRoutes {
    let api: APIContext

    func register(on router: Router<LanyardRequestContext>) {
        let offered = api.dependencies.signInMethods.offered.map {
            OfferedProvider(name: $0.provider, displayName: $0.displayName, kind: $0.offeredKind)
        }
        router.get("v1/providers") { _, _ in
            try JSONResponse.make(offered, headers: [.cacheControl: "public, max-age=300"])
        }
    }
}
