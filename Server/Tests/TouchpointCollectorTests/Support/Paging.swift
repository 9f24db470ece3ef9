@testable import TouchpointCollector

/// Every item of a listing read page after page, each page asked for with the cursor the one
/// before gave, and how many pages that took. Stops after `maximumPages`, so a cursor that never
/// ends fails the test's expectations instead of hanging it.
func allPages<Item: Sendable>(
    maximumPages: Int = 100, _ fetch: (_ cursor: String?) async throws -> Page<Item>
) async throws -> (items: [Item], pages: Int) {
    var items: [Item] = []
    var cursor: String?
    var pages = 0
    repeat {
        let page = try await fetch(cursor)
        items += page.items
        cursor = page.nextCursor
        pages += 1
    } while cursor != nil && pages < maximumPages
    return (items, pages)
}
