import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lanyard

/// The seeds' stories, told through the SDK against `lanyard dev`: `swift run lanyard-demo`.
/// Uses the server at `LANYARD_URL` (default http://127.0.0.1:8080) when it runs in dev mode, else starts
/// `lanyard dev` on a temporary database and stops it at the end.
@main
struct LanyardDemo {
    struct Reminder: Codable, Sendable { var title: String; var done = false }
    struct Tag: Codable, Sendable { var name: String }
    struct Habit: Codable, Sendable { var name: String; var streak: Int }

    static func main() async {
        // `lanyard-demo iphone --server URL`: the iPhone half of the two phones (TwoPhones.swift).
        if CommandLine.arguments.dropFirst().first == "iphone" { exit(await TwoPhones.iPhone(CommandLine.arguments)) }
        do {
            let server = try await DemoServer.reachOrStart()
            defer { server.stop() }
            try await tell(server.url)
            print("\nAll stories told.")
        } catch {
            print("demo failed: \(error)")
            exit(1)
        }
    }

    static func tell(_ url: URL) async throws {
        let emulator = Emulator(url: url)
        let run = UUID().uuidString.prefix(8).lowercased()
        let adaApple = "ada-apple-\(run)", adaGoogle = "ada-google-\(run)"

        chapter("1. Ada signs in with Apple on her iPhone")
        let iPhone = LanyardClient(url: url, storage: MemorySessionStore())
        let nonce = AppleNonce()
        let appleToken = try await emulator.idToken(.apple, sub: adaApple, email: "ada@privaterelay.appleid.com",
                                                    nonce: nonce.hashed)
        let first = try await iPhone.signInWithApple(
            idToken: appleToken, rawNonce: nonce.raw, fullName: PersonNameComponents(givenName: "Ada", familyName: "Lovelace"))
        say("signed in as \(first.user.displayName ?? "?") (\(first.user.id)), new account: \(first.isNewUser)")

        let reminders = iPhone.collection("reminders", of: Reminder.self)
        try await reminders.put(Reminder(title: "Buy milk"), id: "r1")
        try await reminders.put(Reminder(title: "Call Charles"), id: "r2")
        try await iPhone.collection("tags", of: Tag.self).put(Tag(name: "home"), id: "t1")
        say("created 2 reminders and 1 tag")

        chapter("2. She links her Google account in Settings")
        try await iPhone.link(.google(idToken: try await emulator.idToken(.google, sub: adaGoogle, email: "ada@work.example")))
        say("sign-in methods: " + iPhone.linkedProviders.map { $0.provider.displayName + ($0.isPrimary ? " (primary)" : "") }
            .joined(separator: ", "))

        chapter("3. On her Android phone she signs in with Google and finds the same reminders")
        let android = LanyardClient(url: url, storage: MemorySessionStore())
        let second = try await android.signInWithGoogle(idToken: try await emulator.idToken(.google, sub: adaGoogle))
        say("same account: \(second.user.id == first.user.id)")
        for change in try await android.collection("reminders", of: Reminder.self).pullChanges() {
            say("  reminder \(change.id): \(change.value?.title ?? "(deleted)")")
        }

        chapter("4. A guest on an iPad tracks habits, then signs in with the Apple ID that already has an account")
        let iPad = LanyardClient(url: url, storage: MemorySessionStore())
        let guest = try await iPad.signInAnonymously()
        try await iPad.collection("habits", of: Habit.self).put(Habit(name: "Read", streak: 12), id: "h1")
        say("guest \(guest.user.id) has a 12-day reading streak")
        let merged = try await iPad.signInWithApple(idToken: try await emulator.idToken(.apple, sub: adaApple))
        say("signed into \(merged.user.id); guest merged: \(merged.mergedFrom == guest.user.id)")
        let habits = try await iPhone.collection("habits", of: Habit.self).pullChanges()
        say("the iPhone now sees: " + habits.compactMap { $0.value.map { "\($0.name) (\($0.streak) days)" } }.joined(separator: ", "))

        chapter("5. The Android phone edits a reminder; the iPhone, listening, sees it live")
        let live = iPhone.collection("reminders", of: Reminder.self).changes()
        let watcher = Task { () -> [String] in
            var seen: [String] = []
            for try await change in live {
                seen.append("\(change.id): \(change.value?.title ?? "(deleted)")\(change.value?.done == true ? " (done)" : "")")
                if change.id == "r1", change.value?.done == true { break }
            }
            return seen
        }
        // Once the iPhone has caught up, the Android phone marks the milk bought.
        while !live.isLive { try await Task.sleep(for: .milliseconds(20)) }
        say("the iPhone is caught up and live")
        try await android.collection("reminders", of: Reminder.self).put(Reminder(title: "Buy milk", done: true), id: "r1")
        let seenLive = try await withTimeout(seconds: 30) { try await watcher.value }
        guard seenLive.last == "r1: Buy milk (done)" else { throw DemoError("the iPhone did not see the edit: \(seenLive)") }
        say("the iPhone saw, in order: " + seenLive.joined(separator: "; "))

        chapter("6. Ada makes a family; her son joins with a code on his phone; the shopping list is shared live")
        let family = try await iPhone.groups.create(name: "The Lovelaces")
        let invite = try await iPhone.groups.invite(to: family.id)
        say("Ada's invite code: \(invite.code ?? "?") (or the link \(invite.url?.absoluteString ?? "?"))")
        let sons = LanyardClient(url: url, storage: MemorySessionStore())
        try await sons.signInWithGoogle(idToken: try await emulator.idToken(.google, sub: "byron-\(run)"))
        let preview = try await sons.groups.preview(code: invite.code ?? "")
        say("Byron types it in: join \"\(preview.groupName)\" (\(preview.memberCount) member) as \(preview.role.rawValue)?")
        try await sons.groups.join(code: invite.code ?? "")
        let shopping = iPhone.groups.collection("shopping", of: Reminder.self, in: family.id)
        try await shopping.put(Reminder(title: "Bread"), id: "bread")
        let sonsList = sons.groups.collection("shopping", of: Reminder.self, in: family.id).changes()
        let listening = Task { () -> [String] in
            var seen: [String] = []
            for try await change in sonsList {
                seen.append("\(change.value?.title ?? "(deleted)")\(change.value?.done == true ? " (done)" : "")")
                if change.value?.done == true { break }
            }
            return seen
        }
        while !sonsList.isLive { try await Task.sleep(for: .milliseconds(20)) }
        try await shopping.put(Reminder(title: "Bread", done: true), id: "bread")
        let seenBySon = try await withTimeout(seconds: 30) { try await listening.value }
        guard seenBySon.last == "Bread (done)" else { throw DemoError("Byron did not see the list change: \(seenBySon)") }
        say("Byron's phone saw, live: " + seenBySon.joined(separator: "; "))
        try await sons.groups.leave(family.id)
        let after = try await iPhone.groups.group(family.id)
        say("Byron left; the family has \(after.memberCount) member: \(after.members?.first?.displayName ?? "?")")

        chapter("7. Charles made two accounts by mistake; he merges them, proving both")
        let charlesPhone = LanyardClient(url: url, storage: MemorySessionStore())
        try await charlesPhone.signInWithApple(idToken: try await emulator.idToken(.apple, sub: "charles-apple-\(run)"))
        try await charlesPhone.collection("reminders", of: Reminder.self).put(Reminder(title: "Engine notes"), id: "c1")
        let charlesLaptop = LanyardClient(url: url, storage: MemorySessionStore())
        try await charlesLaptop.signInWithGoogle(idToken: try await emulator.idToken(.google, sub: "charles-google-\(run)"))
        try await charlesLaptop.collection("reminders", of: Reminder.self).put(Reminder(title: "Lecture on Tuesday"), id: "c2")
        say("two accounts: \(charlesPhone.user?.id ?? "?") (Apple) and \(charlesLaptop.user?.id ?? "?") (Google)")
        let proving: @Sendable (String) async throws -> ProviderCredential = { nonce in
            // On a phone: Google's sign-in sheet, given the server's nonce.
            .google(idToken: try await emulator.idToken(.google, sub: "charles-google-\(run)", nonce: nonce), nonce: nonce)
        }
        let dryRun = try await charlesPhone.merge(proving: proving, dryRun: true)
        say("a dry run: \(dryRun.recordsMoved) reminder would move, \(dryRun.conflicts.count) clash")
        let result = try await charlesPhone.merge(proving: proving)
        say("merged: \(result.identitiesMoved.joined()) now signs in to \(result.into)")
        let methods = try await charlesPhone.refreshUser().linkedProviders
        say("sign-in methods: " + methods.map { "\($0.provider.displayName) (\($0.isPrimary ? "primary" : "linked"))" }
            .joined(separator: ", "))
        let all = try await charlesPhone.collection("reminders", of: Reminder.self).pullChanges()
        say("his reminders: " + all.compactMap(\.value?.title).joined(separator: ", "))
        do {
            _ = try await charlesLaptop.refreshUser()
        } catch LanyardError.accountMerged(let into) {
            say("the laptop is told: the account was merged into \(into); it signs in again")
        }

        chapter("8. Grace, with only Apple, tries to unlink it")
        let graces = LanyardClient(url: url, storage: MemorySessionStore())
        try await graces.signInWithApple(idToken: try await emulator.idToken(.apple, sub: "grace-\(run)"))
        do {
            try await graces.unlink(.apple)
            say("unexpected: the last sign-in method was removed")
            throw DemoError("unlink of the only method succeeded")
        } catch LanyardError.cannotUnlinkOnlyProvider {
            say("refused: \(LanyardError.cannotUnlinkOnlyProvider.errorDescription!)")
        }

        chapter("9. Grace deletes her account")
        let events = graces.authEvents
        try await graces.deleteAccount()
        var iterator = events.makeAsyncIterator()
        while let event = await iterator.next() {
            if case .signedOut(let reason) = event { say("signed out: \(reason)"); break }
        }
        say("signed in afterwards: \(graces.user != nil)")

        chapter("10. Lin, on a web app without Apple's button, signs in by email and opens the link on her phone")
        let laptop = LanyardClient(url: url, storage: MemorySessionStore())
        let linAddress = "lin-\(run)@example.com"
        let flow = try await laptop.email.start(linAddress)
        say("the laptop shows: \"We sent a link to \(linAddress). Pick \(flow.match) when it asks.\"")
        async let signedIn = flow.awaitConfirmation(timeout: 60)
        let mail = try await emulator.mail(to: linAddress)
        say("the mail holds a code (\(mail.code)) and a link; her phone opens the link, the page asks for the number")
        let page = try await emulator.pick(flow.match, onPageAt: mail.link)
        say("she picks \(flow.match): the page says \"\(page)\"; the phone's browser gets no session")
        let lin = try await signedIn
        say("the laptop is signed in: \(lin.user.email ?? "?"), new account: \(lin.isNewUser), methods: "
            + laptop.linkedProviders.map(\.provider.displayName).joined(separator: ", "))
    }

    static func chapter(_ title: String) { print("\n== \(title)") }

    /// `body`'s value, or a failure after `seconds` (a story that hangs fails).
    static func withTimeout<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                throw DemoError("no answer within \(seconds) s")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
    static func say(_ line: String) { print("   \(line)") }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What Apple's or Google's SDK hands the app on a real device; here the emulator mints it. And the mail `lanyard dev`
/// keeps instead of sending, with the page its link opens.
struct Emulator {
    let url: URL

    /// The newest mail to `address` in the emulator's mailbox, once it is there.
    func mail(to address: String) async throws -> (code: String, link: String) {
        var components = URLComponents(url: url.appendingPathComponent("_emulator/mail"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "to", value: address)]
        for _ in 0..<300 {
            let (data, _) = try await URLSession.shared.data(from: components.url!)
            if let mail = (try JSONSerialization.jsonObject(with: data) as? [[String: Any]])?.first,
               let code = mail["code"] as? String, let link = mail["link"] as? String {
                return (code, link)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw DemoError("no mail to \(address) in the mailbox")
    }

    /// Picks `number` on the link's page, as the person does in their browser; the page's heading.
    func pick(_ number: Int, onPageAt link: String) async throws -> String {
        var request = URLRequest(url: URL(string: link)!)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("match=\(number)".utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        let page = String(decoding: data, as: UTF8.self)
        guard (response as? HTTPURLResponse)?.statusCode == 200, !page.contains("access_token"),
              let start = page.range(of: "<h1>"), let end = page.range(of: "</h1>") else {
            throw DemoError("the link's page did not confirm: \(page.prefix(200))")
        }
        return String(page[start.upperBound..<end.lowerBound])
    }

    enum Provider: String { case apple, google }

    func idToken(_ provider: Provider, sub: String, email: String? = nil, nonce: String? = nil) async throws -> String {
        var request = URLRequest(url: url.appendingPathComponent("_emulator/\(provider.rawValue)/id-token"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        var body = ["sub": sub]
        body["email"] = email
        body["nonce"] = nonce
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, _) = try await URLSession.shared.data(for: request)
        guard let token = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["id_token"] as? String else {
            throw DemoError("the emulator did not mint a token: \(String(decoding: data, as: UTF8.self))")
        }
        return token
    }
}
