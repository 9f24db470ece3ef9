#if canImport(SwiftUI)
import SwiftUI
import TouchpointSurveys

/// The survey's sheet: a title, a message, and buttons or a text editor (a text field on tvOS and
/// watchOS, which have no `TextEditor`). It forwards taps to the presentation, which validates and
/// ends it.
struct SurveySheet: View {
    let presentation: SurveyPresentation
    @State private var text = ""
    @State private var problem: String?

    var body: some View {
        VStack(alignment: .leading, spacing: 16) {
            Text(presentation.survey.title).font(.headline)
            Text(presentation.survey.message).font(.body)
            switch presentation.survey.response {
            case .options(let options):
                ForEach(options, id: \.self) { option in
                    Button(option) { presentation.choose(option) }
                        .buttonStyle(.bordered)
                        .frame(maxWidth: .infinity)
                }
            case .text(let settings):
                #if os(tvOS) || os(watchOS)
                // No TextEditor here: a one-line field, which opens the system's text entry.
                TextField(settings.placeholder ?? "", text: $text)
                #else
                TextEditor(text: $text)
                    .frame(minHeight: 120)
                    .overlay(alignment: .topLeading) {
                        if text.isEmpty, let placeholder = settings.placeholder {
                            Text(placeholder).foregroundStyle(.secondary).padding(8).allowsHitTesting(false)
                        }
                    }
                #endif
                if let problem {
                    Text(problem).font(.footnote).foregroundStyle(.red)
                }
                Button(settings.submitLabel ?? "Submit") {
                    problem = presentation.submit(text: text).message
                }
                .buttonStyle(.borderedProminent)
                .disabled(!presentation.validate(text: text).isValid)
            }
            Button("Not now", role: .cancel) { presentation.dismiss() }
                .frame(maxWidth: .infinity)
        }
        .padding()
        .presentationDetents([.medium, .large])
    }
}
#endif
