// An interface stub of the SwiftUI declarations Touchpoint uses, for type-checking its Apple-only
// code on Linux (scripts/check-apple.sh). Test-only: no product ships it, nothing runs it (every
// body is a placeholder). Signatures follow Apple's documentation; availability on each platform is
// expressed by leaving a declaration out where Apple's documentation says it does not exist
// (compiled with -D APPLE_IOS, APPLE_MACOS, APPLE_TVOS, APPLE_WATCHOS or APPLE_VISIONOS), so a use
// of it on that platform fails to compile. Combine's types come from OpenCombine, as on Linux the
// SDK modules themselves use it.
@_exported import Foundation
@_exported import Observation
@_exported import OpenCombine

// MARK: View and its builder

@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder var body: Body { get }
}

extension Never: View {
    public typealias Body = Never
    public var body: Never { fatalError() }
}

/// A view with no body of its own (the placeholder views below).
@MainActor @preconcurrency
public protocol _PrimitiveView: View where Body == Never {}

extension _PrimitiveView {
    public var body: Never { fatalError() }
}

@resultBuilder
public enum ViewBuilder {
    public static func buildBlock() -> EmptyView { fatalError() }
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<
        (repeat each Content)
    > {
        fatalError()
    }
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildEither<TrueContent: View, FalseContent: View>(first: TrueContent)
        -> _ConditionalContent<TrueContent, FalseContent>
    { fatalError() }
    public static func buildEither<TrueContent: View, FalseContent: View>(second: FalseContent)
        -> _ConditionalContent<TrueContent, FalseContent>
    { fatalError() }
    public static func buildLimitedAvailability<Content: View>(_ content: Content) -> AnyView { fatalError() }
}

extension Optional: View where Wrapped: View {
    public typealias Body = Never
    public var body: Never { fatalError() }
}

public struct TupleView<T>: _PrimitiveView {
    public var value: T
    public init(_ value: T) { self.value = value }
}

public struct _ConditionalContent<TrueContent: View, FalseContent: View>: _PrimitiveView {}

public struct AnyView: _PrimitiveView {
    public init<V: View>(_ view: V) {}
}

public struct EmptyView: _PrimitiveView {
    public init() {}
}

// MARK: Apps and scenes

@MainActor @preconcurrency
public protocol App {
    associatedtype Body: Scene
    @SceneBuilder var body: Body { get }
    init()
}

@MainActor @preconcurrency
public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder var body: Body { get }
}

extension Never: Scene {}

@resultBuilder
public enum SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

public struct WindowGroup<Content: View>: Scene {
    public typealias Body = Never
    public var body: Never { fatalError() }
    public init(@ViewBuilder content: () -> Content) {}
}

// MARK: State and environment

@propertyWrapper
public struct State<Value>: DynamicProperty {
    public init(wrappedValue value: Value) { fatalError() }
    public init(initialValue value: Value) { fatalError() }
    public var wrappedValue: Value {
        get { fatalError() }
        nonmutating set {}
    }
    public var projectedValue: Binding<Value> { fatalError() }
}

@propertyWrapper
public struct StateObject<ObjectType: ObservableObject>: DynamicProperty {
    public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) {}
    @MainActor public var wrappedValue: ObjectType { fatalError() }
}

@propertyWrapper
public struct ObservedObject<ObjectType: ObservableObject>: DynamicProperty {
    public init(wrappedValue: ObjectType) {}
    @MainActor public var wrappedValue: ObjectType { fatalError() }
}

@propertyWrapper
@dynamicMemberLookup
public struct Binding<Value> {
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {}
    public var wrappedValue: Value {
        get { fatalError() }
        nonmutating set {}
    }
    public var projectedValue: Binding<Value> { self }
    public subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> {
        fatalError()
    }
}

public protocol DynamicProperty {}

@propertyWrapper
public struct Environment<Value>: DynamicProperty {
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {}
    public var wrappedValue: Value { fatalError() }
}

public struct EnvironmentValues {
    public var openURL: OpenURLAction { fatalError() }
}

public struct OpenURLAction {
    @MainActor public func callAsFunction(_ url: URL) {}
}

// MARK: Text, images, shapes, styles

public struct LocalizedStringKey: ExpressibleByStringInterpolation, Equatable {
    public init(_ value: String) {}
    public init(stringLiteral value: String) {}
    public init(stringInterpolation: DefaultStringInterpolation) {}
}

public struct Text: _PrimitiveView, Equatable {
    public init(_ key: LocalizedStringKey) {}
    @_disfavoredOverload public init<S: StringProtocol>(_ content: S) {}
    public init(verbatim content: String) {}
    public func font(_ font: Font?) -> Text { self }
}

public struct Font: Hashable, Sendable {
    public enum TextStyle: Hashable, Sendable { case body, headline, subheadline, caption, footnote, title }
    public enum Design: Hashable, Sendable { case `default`, monospaced, rounded, serif }
    public static let body = Font()
    public static let headline = Font()
    public static let subheadline = Font()
    public static let caption = Font()
    public static let footnote = Font()
    public static func system(_ style: TextStyle, design: Design? = nil, weight: Weight? = nil) -> Font { Font() }
    public struct Weight: Hashable, Sendable {}
}

public struct Image: _PrimitiveView {
    public init(systemName: String) {}
    public func resizable() -> Image { self }
}

public struct AsyncImage<Content: View>: _PrimitiveView {
    public init<I: View, P: View>(
        url: URL?, scale: CGFloat = 1, @ViewBuilder content: @escaping (Image) -> I,
        @ViewBuilder placeholder: @escaping () -> P
    ) where Content == _ConditionalContent<I, P> {}
}

public protocol ShapeStyle: Sendable {}

public struct Color: View, ShapeStyle, Hashable {
    public typealias Body = Never
    public var body: Never { fatalError() }
    public static let red = Color()
    public static let green = Color()
    public static let secondary = Color()
    public func opacity(_ opacity: Double) -> Color { self }
}

public struct HierarchicalShapeStyle: ShapeStyle {
    public static let secondary = HierarchicalShapeStyle()
}

extension ShapeStyle where Self == HierarchicalShapeStyle {
    public static var secondary: HierarchicalShapeStyle { HierarchicalShapeStyle() }
}

extension ShapeStyle where Self == Color {
    public static var red: Color { Color() }
    public static var green: Color { Color() }
}

public struct TintShapeStyle: ShapeStyle {}

extension ShapeStyle where Self == TintShapeStyle {
    public static var tint: TintShapeStyle { TintShapeStyle() }
}

public protocol Shape: View, Sendable {}

public enum RoundedCornerStyle: Sendable { case circular, continuous }

public struct RoundedRectangle: Shape {
    public typealias Body = Never
    public var body: Never { fatalError() }
    public init(cornerRadius: CGFloat, style: RoundedCornerStyle = .continuous) {}
}

public struct Rectangle: Shape {
    public typealias Body = Never
    public var body: Never { fatalError() }
    public init() {}
}

// MARK: Layout and containers

public struct HorizontalAlignment: Equatable, Sendable {
    public static let leading = HorizontalAlignment()
    public static let center = HorizontalAlignment()
}

public struct VerticalAlignment: Equatable, Sendable {
    public static let center = VerticalAlignment()
    public static let firstTextBaseline = VerticalAlignment()
}

public struct Alignment: Equatable, Sendable {
    public static let topLeading = Alignment()
    public static let center = Alignment()
}

public struct VStack<Content: View>: _PrimitiveView {
    public init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content)
    {}
}

public struct HStack<Content: View>: _PrimitiveView {
    public init(alignment: VerticalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {}
}

public struct Spacer: _PrimitiveView {
    public init(minLength: CGFloat? = nil) {}
}

public struct Group<Content: View>: _PrimitiveView {
    public init(@ViewBuilder content: () -> Content) {}
}

public struct List<SelectionValue: Hashable, Content: View>: _PrimitiveView {
    public init(@ViewBuilder content: () -> Content) where SelectionValue == Never {}
}

public struct Section<Parent, Content: View, Footer>: _PrimitiveView {
    public init(_ titleKey: LocalizedStringKey, @ViewBuilder content: () -> Content)
    where Parent == Text, Footer == EmptyView {}
    @_disfavoredOverload public init<S: StringProtocol>(_ title: S, @ViewBuilder content: () -> Content)
    where Parent == Text, Footer == EmptyView {}
}

public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View>: _PrimitiveView {
    public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content)
    {}
    public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content)
    where Data.Element: Identifiable, ID == Data.Element.ID {}
}

public struct ProgressView<Label: View, CurrentValueLabel: View>: _PrimitiveView {
    public init() where Label == EmptyView, CurrentValueLabel == EmptyView {}
}

public struct Label<Title: View, Icon: View>: _PrimitiveView {
    public init(_ titleKey: LocalizedStringKey, systemImage name: String) where Title == Text, Icon == Image {}
}

// MARK: Controls

public struct ButtonRole: Equatable, Sendable {
    public static let cancel = ButtonRole()
    public static let destructive = ButtonRole()
}

public struct Button<Label: View>: _PrimitiveView {
    public init(action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label) {}
    public init(_ titleKey: LocalizedStringKey, action: @escaping @MainActor () -> Void) where Label == Text {}
    @_disfavoredOverload
    public init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) where Label == Text {}
    public init(_ titleKey: LocalizedStringKey, role: ButtonRole?, action: @escaping @MainActor () -> Void)
    where Label == Text {}
}

public protocol PrimitiveButtonStyle {}

public struct BorderedButtonStyle: PrimitiveButtonStyle {}
public struct BorderedProminentButtonStyle: PrimitiveButtonStyle {}
public struct PlainButtonStyle: PrimitiveButtonStyle {}

extension PrimitiveButtonStyle where Self == BorderedButtonStyle {
    public static var bordered: BorderedButtonStyle { BorderedButtonStyle() }
}

extension PrimitiveButtonStyle where Self == BorderedProminentButtonStyle {
    public static var borderedProminent: BorderedProminentButtonStyle { BorderedProminentButtonStyle() }
}

extension PrimitiveButtonStyle where Self == PlainButtonStyle {
    public static var plain: PlainButtonStyle { PlainButtonStyle() }
}

public struct TextField<Label: View>: _PrimitiveView {
    public init(_ titleKey: LocalizedStringKey, text: Binding<String>) where Label == Text {}
    @_disfavoredOverload
    public init<S: StringProtocol>(_ title: S, text: Binding<String>) where Label == Text {}
}

#if !APPLE_TVOS && !APPLE_WATCHOS
// TextEditor: iOS 14, iPadOS 14, Mac Catalyst 14, macOS 11, visionOS 1; not tvOS, not watchOS.
public struct TextEditor: _PrimitiveView {
    public init(text: Binding<String>) {}
}
#endif

// MARK: Presentation

public struct PresentationDetent: Hashable, Sendable {
    public static let medium = PresentationDetent()
    public static let large = PresentationDetent()
}

public struct AccessibilityChildBehavior: Hashable, Sendable {
    public static let combine = AccessibilityChildBehavior()
    public static let ignore = AccessibilityChildBehavior()
}

public struct AccessibilityTraits: SetAlgebra, Hashable, Sendable {
    public static let isButton = AccessibilityTraits()
    public init() {}
    public func union(_ other: Self) -> Self { self }
    public func intersection(_ other: Self) -> Self { self }
    public func symmetricDifference(_ other: Self) -> Self { self }
    public func contains(_ member: Self) -> Bool { false }
    public mutating func insert(_ newMember: Self) -> (inserted: Bool, memberAfterInsert: Self) { (false, self) }
    public mutating func remove(_ member: Self) -> Self? { nil }
    public mutating func update(with newMember: Self) -> Self? { nil }
    public mutating func formUnion(_ other: Self) {}
    public mutating func formIntersection(_ other: Self) {}
    public mutating func formSymmetricDifference(_ other: Self) {}
}

// MARK: Modifiers

extension View {
    public func font(_ font: Font?) -> some View { self }
    public func foregroundStyle<S: ShapeStyle>(_ style: S) -> some View { self }
    public func lineLimit(_ number: Int?) -> some View { self }
    public func padding(_ length: CGFloat? = nil) -> some View { self }
    public func frame(width: CGFloat? = nil, height: CGFloat? = nil, alignment: Alignment = .center) -> some View {
        self
    }
    public func frame(
        minWidth: CGFloat? = nil, idealWidth: CGFloat? = nil, maxWidth: CGFloat? = nil, minHeight: CGFloat? = nil,
        idealHeight: CGFloat? = nil, maxHeight: CGFloat? = nil, alignment: Alignment = .center
    ) -> some View { self }
    public func overlay<V: View>(alignment: Alignment = .center, @ViewBuilder content: () -> V) -> some View { self }
    public func allowsHitTesting(_ enabled: Bool) -> some View { self }
    public func disabled(_ disabled: Bool) -> some View { self }
    public func buttonStyle<S: PrimitiveButtonStyle>(_ style: S) -> some View { self }
    public func presentationDetents(_ detents: Set<PresentationDetent>) -> some View { self }
    public func sheet<Item: Identifiable, Content: View>(
        item: Binding<Item?>, onDismiss: (() -> Void)? = nil, @ViewBuilder content: @escaping (Item) -> Content
    ) -> some View { self }
    public func onAppear(perform action: (() -> Void)? = nil) -> some View { self }
    public func onDisappear(perform action: (() -> Void)? = nil) -> some View { self }
    public func onOpenURL(perform action: @escaping (URL) -> Void) -> some View { self }
    // The action runs on the view's actor (the main actor), as SwiftUI declares it.
    public func task(
        priority: TaskPriority = .userInitiated, @_inheritActorContext _ action: @escaping @Sendable () async -> Void
    ) -> some View { self }
    public func onReceive<P: Publisher>(_ publisher: P, perform action: @escaping (P.Output) -> Void) -> some View
    where P.Failure == Never { self }
    public func onTapGesture(count: Int = 1, perform action: @escaping () -> Void) -> some View { self }
    public func contentShape<S: Shape>(_ shape: S, eoFill: Bool = false) -> some View { self }
    public func clipShape<S: Shape>(_ shape: S, style: FillStyle = FillStyle()) -> some View { self }
    public func scaledToFill() -> some View { self }
    public func accessibilityHidden(_ hidden: Bool) -> some View { self }
    public func accessibilityElement(children: AccessibilityChildBehavior = .ignore) -> some View { self }
    public func accessibilityAddTraits(_ traits: AccessibilityTraits) -> some View { self }
}

public struct FillStyle: Equatable {
    public init(eoFill: Bool = false, antialiased: Bool = true) {}
}

// MARK: Combine's scheduler for the main queue

extension Publisher {
    /// Combine's `receive(on:)` with `DispatchQueue` as its scheduler.
    public func receive(on queue: DispatchQueue) -> AnyPublisher<Output, Failure> { fatalError() }
}
