/// Provider names as Supabase's clients spell them: GoTrue calls Microsoft `azure`; every other name (`apple`,
/// `google`, `keycloak`, a custom one) is the same on both sides (reference section 20).
enum GoTrueProviderNames {
    static func lanyard(_ gotrue: String) -> String {
        gotrue == "azure" ? "microsoft" : gotrue
    }

    static func gotrue(_ lanyard: String) -> String {
        lanyard == "microsoft" ? "azure" : lanyard
    }
}
