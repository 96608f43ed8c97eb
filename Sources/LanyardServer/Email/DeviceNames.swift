import Foundation

/// A device named the way a person says it ("Chrome on Linux", "Safari on iPhone") from a `User-Agent`, for the
/// email link's page (reference section 25): the person must recognise the device that asked, and a raw
/// user-agent string says nothing to most people. Pure, and unit-tested.
enum DeviceNames {
    /// The browser or app and its platform, or nil when the string names neither.
    static func describe(userAgent: String?) -> String? {
        guard let agent = userAgent, !agent.isEmpty else { return nil }
        let program = program(agent)
        let platform = platform(agent)
        switch (program, platform) {
        case (let program?, let platform?): return "\(program) on \(platform)"
        case (let program?, nil): return program
        case (nil, let platform?): return "an app on \(platform)"
        case (nil, nil): return nil
        }
    }

    /// Browsers first, the ones that carry another's token before it (Edge and Opera say "Chrome", Chrome says
    /// "Safari"); then the SDKs and HTTP libraries apps use.
    static func program(_ agent: String) -> String? {
        let browsers: [(token: String, name: String)] = [
            ("Edg/", "Edge"), ("EdgiOS/", "Edge"), ("EdgA/", "Edge"), ("OPR/", "Opera"), ("SamsungBrowser/", "Samsung Internet"),
            ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("Chromium/", "Chromium"),
            ("Chrome/", "Chrome"),
        ]
        if let browser = browsers.first(where: { agent.contains($0.token) }) { return browser.name }
        if agent.contains("Safari/"), agent.contains("Version/") || agent.contains("Mobile/") { return "Safari" }
        let apps: [(token: String, name: String)] = [
            ("okhttp/", "an Android app"), ("Dalvik/", "an Android app"), ("CFNetwork/", "an app"),
            ("lanyard-kotlin", "an app"), ("lanyard-swift", "an app"), ("lanyard-js", "a web app"),
        ]
        return apps.first(where: { agent.localizedCaseInsensitiveContains($0.token) })?.name
    }

    static func platform(_ agent: String) -> String? {
        let platforms: [(token: String, name: String)] = [
            ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("CrOS", "ChromeOS"),
            ("Windows", "Windows"), ("Macintosh", "Mac"), ("Mac OS X", "Mac"), ("Darwin/", "an Apple device"),
            ("Linux", "Linux"),
        ]
        return platforms.first(where: { agent.contains($0.token) })?.name
    }

    static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                         "October", "November", "December"]

    /// When the flow was asked for, as a person reads it: "3 minutes ago (14:05 UTC, 28 November 2026)".
    static func describe(time: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(time)))
        let ago = switch seconds {
        case ..<60: "just now"
        case ..<120: "a minute ago"
        case ..<3600: "\(seconds / 60) minutes ago"
        case ..<7200: "an hour ago"
        default: "\(seconds / 3600) hours ago"
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: time)
        // Named here: a calendar's month symbols follow the process's locale (on Linux without one: "M11").
        let month = Self.months[((parts.month ?? 1) - 1) % 12]
        let clock = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        return "\(ago) (\(clock) UTC, \(parts.day ?? 1) \(month) \(parts.year ?? 1970))"
    }
}
