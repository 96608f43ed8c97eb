import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

/// `GET /v1/admin/stats`: how many accounts, how active, and what happened per day over the last 30 days.
public struct AdminStatistics: Sendable {
    let dependencies: CoreDependencies

    public init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    public func compute() async throws -> AdminStats {
        let now = dependencies.clock.now()
        let day: TimeInterval = 86_400
        return try await dependencies.database.read { connection in
            let store = AdminStore(connection)
            let counts = try await store.accountCounts()
            let active = AdminStats.Active(lastDay: try await store.activeAccounts(since: now - day),
                                           last7Days: try await store.activeAccounts(since: now - 7 * day),
                                           last30Days: try await store.activeAccounts(since: now - 30 * day))
            let since = now - 30 * day
            let signIns = try await store.dailyCounts(event: AuditEvent.signIn.rawValue, since: since, byProvider: true)
            let merges = try await store.dailyCounts(event: AuditEvent.accountMerged.rawValue, since: since, byProvider: false)
            let reuses = try await store.dailyCounts(event: AuditEvent.refreshReuseDetected.rawValue, since: since,
                                                     byProvider: false)
            return AdminStats(accounts: counts.accounts, guests: counts.guests, disabled: counts.disabled, active: active,
                              signInsPerDay: Self.days(signIns, byProvider: true),
                              mergesPerDay: Self.days(merges, byProvider: false),
                              reuseDetectionsPerDay: Self.days(reuses, byProvider: false))
        }
    }

    /// Rows per (day, provider) folded into one entry per day, oldest first; days without events are left out.
    static func days(_ rows: [(day: Int64, provider: String?, count: Int)], byProvider: Bool) -> [AdminStats.Day] {
        var byDay: [Int64: AdminStats.Day] = [:]
        for row in rows {
            var entry = byDay[row.day] ?? AdminStats.Day(date: dateText(day: row.day), count: 0,
                                                         byProvider: byProvider ? [:] : nil)
            entry.count += row.count
            if byProvider { entry.byProvider?[row.provider ?? "unknown", default: 0] += row.count }
            byDay[row.day] = entry
        }
        return byDay.keys.sorted().compactMap { byDay[$0] }
    }

    static func dateText(day: Int64) -> String {
        String(Timestamps.format(Date(timeIntervalSince1970: TimeInterval(day) * 86_400)).prefix(10))
    }
}
