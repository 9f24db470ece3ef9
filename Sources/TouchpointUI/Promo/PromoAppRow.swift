#if canImport(SwiftUI)
import SwiftUI
import TouchpointPromo

/// One row of ``MoreAppsView``: icon, name, category and tagline.
struct PromoAppRow: View {
    let app: PromoApp
    let tagline: String

    var body: some View {
        HStack(spacing: 12) {
            AsyncImage(url: app.iconURL) { image in
                image.resizable().scaledToFill()
            } placeholder: {
                Color.secondary.opacity(0.2)
            }
            .frame(width: 48, height: 48)
            .clipShape(RoundedRectangle(cornerRadius: 11, style: .continuous))
            .accessibilityHidden(true)

            VStack(alignment: .leading, spacing: 2) {
                Text(app.name).font(.headline)
                Text(app.category).font(.caption).foregroundStyle(.secondary)
                if !tagline.isEmpty {
                    Text(tagline).font(.subheadline).foregroundStyle(.secondary).lineLimit(2)
                }
            }
            Spacer(minLength: 0)
            Image(systemName: "arrow.down.app")
                .foregroundStyle(.tint)
                .accessibilityHidden(true)
        }
        .contentShape(Rectangle())
        .accessibilityElement(children: .combine)
        .accessibilityAddTraits(.isButton)
    }
}
#endif
