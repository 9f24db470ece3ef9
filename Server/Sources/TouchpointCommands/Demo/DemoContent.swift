import Foundation
import Touchpoint

/// What the demo's app does and asks: its typed events, its surveys, its apps to promote.
enum DemoContent {
    /// The demo app's typed events, routed through `GlobalTracker` like an app's.
    enum Events {
        struct AppOpened: TrackableEvent {
            let appID: String
            let identifier = EventIdentifier(name: "app_opened")
            var metadata: [String: Any] { ["app": appID] }
        }

        struct ScreenViewed: TrackableEvent {
            let screen: String
            let identifier = EventIdentifier(name: "screen_viewed")
            var metadata: [String: Any] { ["screen": screen] }
        }
    }

    static let screens = ["home", "search", "product", "cart", "settings", "article"]
    static let products: [(title: String, price: Double)] = [
        ("Notebook", 12.5), ("Desk lamp", 39), ("Headphones", 89), ("Backpack", 64), ("Coffee beans", 18),
    ]
    static let feedback = [
        "Checkout was quick.", "Search could be smarter.", "Love the dark mode!",
        "The article pages load slowly on my phone.", "Please add a wishlist.", "All good, thanks.",
    ]
    /// The promoting apps (one per simulated user, round robin) and the catalog's apps.
    static let apps = ["notes", "mail", "photos", "maps"]

    /// The survey config the demo stores when the collector has none.
    static let surveyConfig = """
        {
          "surveys": [
            {
              "id": "ask_rating",
              "title": "Quick question",
              "message": "How would you rate your checkout?",
              "response": { "type": "options", "options": ["Great", "Okay", "Poor"] },
              "oncePerSession": true,
              "trigger": { "event": { "name": "checkout_success", "properties": { "amount": { "op": "gt", "value": 50 } } } }
            },
            {
              "id": "open_feedback",
              "title": "We'd love your feedback",
              "message": "What worked well, or what could improve?",
              "response": { "type": "text", "placeholder": "Share your thoughts…", "minLength": 5, "maxLength": 500 },
              "oncePerSession": true,
              "trigger": { "event": { "name": "article_read", "properties": { "minutes": { "op": "gte", "value": 3 } } } }
            }
          ]
        }

        """

    /// The promo catalog the demo stores when the collector has none.
    static let catalog = """
        {
          "apps": [
            { "id": "notes", "name": "Notes", "appStoreID": "100000001", "iconURL": "https://example.com/notes.png", "category": "Productivity", "tagline": { "en": "Write it down" } },
            { "id": "mail", "name": "Mail", "appStoreID": "100000002", "iconURL": "https://example.com/mail.png", "category": "Productivity", "tagline": { "en": "Inbox zero, finally" } },
            { "id": "photos", "name": "Photos", "appStoreID": "100000003", "iconURL": "https://example.com/photos.png", "category": "Photography", "tagline": { "en": "Every moment, sorted" } },
            { "id": "maps", "name": "Maps", "appStoreID": "100000004", "iconURL": "https://example.com/maps.png", "category": "Navigation", "tagline": { "en": "Find your way" } }
          ],
          "maxApps": 3
        }

        """
}
