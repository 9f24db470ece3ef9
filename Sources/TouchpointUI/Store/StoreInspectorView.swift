#if canImport(SwiftUI)
import SwiftUI
import TouchpointStore

#if DEBUG
/// The scenario store inspector (debug builds only): values by key path, subscriptions, live
/// expressions, recent changes, and a field for manual writes.
///
/// ```swift
/// .sheet(isPresented: $showsInspector) {
///     StoreInspectorView(inspector: StoreInspector(store.scoped(.scenarioSession(id: "checkout"))))
/// }
/// ```
///
/// Everything it shows and does comes from ``StoreInspector``; the view only lays it out and
/// refreshes when the store changes.
public struct StoreInspectorView: View {
    private let inspector: StoreInspector
    @State private var entries: [StoreInspector.Entry] = []
    @State private var subscriptions: [StoreInspector.SubscriptionInfo] = []
    @State private var expressions: [StoreInspector.ExpressionInfo] = []
    @State private var changes: [StoreChange] = []
    @State private var keyPath = ""
    @State private var valueText = ""
    @State private var writeResult: ValidationResult?

    /// Creates the view.
    public init(inspector: StoreInspector) { self.inspector = inspector }

    public var body: some View {
        List {
            Section("Values") {
                ForEach(entries) { entry in
                    HStack(alignment: .firstTextBaseline) {
                        Text(entry.keyPath).font(.system(.body, design: .monospaced))
                        Spacer()
                        Text(entry.valueText).foregroundStyle(.secondary).lineLimit(2)
                    }
                    .contentShape(Rectangle())
                    .onTapGesture {
                        keyPath = entry.keyPath
                        valueText = entry.valueText
                    }
                }
            }
            Section("Write") {
                TextField("key path, e.g. cart.total", text: $keyPath)
                TextField("JSON value, e.g. 12.5", text: $valueText)
                HStack {
                    Button("Set") { writeResult = inspector.write(keyPath, jsonText: valueText) }
                    Button("Remove", role: .destructive) { writeResult = inspector.remove(keyPath) }
                }
                if let writeResult {
                    Text(writeResult.description).foregroundStyle(writeResult.isOK ? .green : .red)
                }
            }
            Section("Subscriptions (\(subscriptions.count))") {
                ForEach(subscriptions) { subscription in
                    Text(
                        "#\(subscription.id) \(subscription.kind): \(subscription.keyPaths.joined(separator: ", "))"
                    )
                }
            }
            Section("Live expressions") {
                ForEach(expressions) { expression in
                    Text(
                        "\(expression.id): \(expression.outputKeyPath) ← \(expression.dependsOn.joined(separator: ", "))"
                    )
                }
            }
            Section("Recent changes") {
                ForEach(Array(changes.reversed().enumerated()), id: \.offset) { _, change in
                    VStack(alignment: .leading) {
                        ForEach(Array(change.patches.enumerated()), id: \.offset) { _, patch in
                            Text(
                                "\(patch.op.rawValue) \(patch.keyPath) = \(patch.newValue?.jsonString(sortedKeys: true) ?? "—")"
                            )
                            .font(.system(.caption, design: .monospaced))
                        }
                    }
                }
            }
        }
        .onAppear(perform: refresh)
        .onReceive(inspector.store.changesPublisher.receive(on: DispatchQueue.main)) { _ in refresh() }
    }

    private func refresh() {
        entries = inspector.entries()
        subscriptions = inspector.subscriptions()
        expressions = inspector.liveExpressions()
        changes = inspector.recentChanges()
    }
}
#endif
#endif
