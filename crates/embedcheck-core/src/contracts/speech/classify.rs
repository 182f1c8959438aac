//! The model class a run judges its speech server by, decided once: from
//! `--speech-model-class`, else the model's name, else how the server refuses
//! verbose_json, else whisper-1's (`class.rs` says what each class's contract has).

use super::class::{ClassBasis, Classified, ModelClass, refused_as_gpt4o};
use super::requests;
use crate::session::facts::Fact;
use crate::session::{ProbeError, Session};

/// The class the run judges the server by: decided once, from the option, the model's
/// name, or how the server refuses verbose_json, and kept among the facts.
pub(crate) async fn of(s: &Session) -> Result<Classified, ProbeError> {
    if let Some(known) = super::learned(s).model_class {
        return Ok(known.value);
    }
    let fact = decide(s).await?;
    let classified = fact.value.clone();
    super::learn(s, |facts| {
        facts.model_class.get_or_insert(fact);
    });
    Ok(classified)
}

async fn decide(s: &Session) -> Result<Fact<Classified>, ProbeError> {
    if let Some(class) = super::settings::of(s).model_class {
        let basis = ClassBasis::Declared;
        return Ok(Fact::declared(
            Classified { class, basis },
            "--speech-model-class",
        ));
    }
    let model = requests::model(s);
    if let Some(class) = ModelClass::of_model(&model) {
        let minimal = s.send(requests::minimal(s)).await?;
        let basis = ClassBasis::ModelName { model };
        return Ok(s.detected(Classified { class, basis }, &minimal.exchange));
    }
    let verbose = s.send(requests::in_format(s, "verbose_json")).await?;
    let classified = match refused_as_gpt4o(&verbose) {
        true => Classified {
            class: ModelClass::Gpt4oTranscribe,
            basis: ClassBasis::Refusal {
                status: verbose.status,
                said: crate::http::excerpt::cut(&verbose.error_message().unwrap_or_default(), 160),
            },
        },
        false => Classified {
            class: ModelClass::Whisper,
            basis: ClassBasis::Unshown,
        },
    };
    Ok(s.detected(classified, &verbose.exchange))
}
