//! Each contract's own options, on the command line and in a matrix server's entry:
//! declared by the contract beside its settings, read by the one parser of the
//! command line (clap) and of `--servers` (serde), and turned into each contract's
//! settings here.

use super::contract::ServerOptionError;
use super::{embeddings, rerank, speech};
use crate::http::Route;
use crate::reference::ReferenceError;
use crate::session::ByContract;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

/// Every contract's own command-line options, flattened into the command line's: the
/// one parser reads them, and each contract turns its own into its settings.
#[derive(Clone, Debug, clap::Args)]
pub struct ContractOptions {
    /// Embeddings' options, which the CLI's embeddings-only views (the migration's
    /// query instruction, the matrix's agreement threshold) also read.
    #[command(flatten)]
    pub embeddings: embeddings::settings::EmbeddingsOptions,
    #[command(flatten)]
    rerank: rerank::settings::RerankOptions,
    #[command(flatten)]
    speech: speech::settings::SpeechOptions,
}

impl ContractOptions {
    /// Each contract's settings from its options; fails on an unreadable reference file.
    pub fn settings(&self) -> Result<ByContract, ReferenceError> {
        Ok(ByContract::default()
            .with(self.embeddings.settings()?)
            .with(self.rerank.settings()?)
            .with(self.speech.settings()?))
    }
}

/// Every contract's own values of one matrix server (its `[[server]]` entry in
/// `--servers`), over the run's. Flattened into the entry, it takes exactly its
/// contracts' keys, so the entry still refuses a key no one knows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerOptions {
    rerank: rerank::settings::RerankServer,
    speech: speech::settings::SpeechServer,
    embeddings: embeddings::settings::EmbeddingsServer,
}

impl ServerOptions {
    /// `store` with this server's values over the run's.
    pub fn over(&self, store: &mut ByContract) -> Result<(), ServerOptionError> {
        self.rerank.over(store.get_mut())?;
        self.speech.over(store.get_mut())?;
        self.embeddings.over(store.get_mut())
    }

    /// Every contract's keys (`flattened_keys`).
    fn keys() -> &'static [&'static str] {
        static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
        KEYS.get_or_init(|| {
            [
                fields_of::<rerank::settings::RerankServer>(),
                fields_of::<speech::settings::SpeechServer>(),
                fields_of::<embeddings::settings::EmbeddingsServer>(),
            ]
            .concat()
        })
    }
}

impl<'de> Deserialize<'de> for ServerOptions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = flattened(deserializer, "ServerOptions", Self::keys())?;
        Ok(ServerOptions {
            rerank: part(&table)?,
            speech: part(&table)?,
            embeddings: part(&table)?,
        })
    }
}

/// Every contract's own facts of one vendor (its profile in `specs/vendors/`), beside
/// the embeddings facts the profile holds: speech's route and model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VendorParts {
    speech: speech::settings::SpeechVendor,
}

impl VendorParts {
    /// `store` with what the vendor documents standing in where the user declared
    /// nothing (its speech model for `--speech-model`).
    pub fn adjust(&self, store: &mut ByContract) {
        self.speech.adjust(store.get_mut());
    }

    /// What the run's summary line says of them (`speech model whisper-large-v3`).
    pub fn summary(&self) -> Vec<String> {
        self.speech.summary().into_iter().collect()
    }

    /// The URLs the profile gives for `--endpoint` beside its embeddings one, each with
    /// the route a run pasting it must reach.
    pub fn endpoints(&self) -> Vec<(&str, Route)> {
        let speech = self
            .speech
            .endpoint()
            .map(|url| (url, speech::requests::ROUTE));
        speech.into_iter().collect()
    }

    fn keys() -> &'static [&'static str] {
        static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
        KEYS.get_or_init(fields_of::<speech::settings::SpeechVendor>)
    }
}

impl<'de> Deserialize<'de> for VendorParts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = flattened(deserializer, "VendorParts", Self::keys())?;
        Ok(VendorParts {
            speech: part(&table)?,
        })
    }
}

/// The keys `keys` of the entry a value is flattened into, as one table. An entry's
/// flattened part is offered only the keys it names (serde's flattening hands a
/// struct its own fields), where a part that took any map would leave the entry, which
/// refuses unknown keys, unable to tell one.
fn flattened<'de, D: Deserializer<'de>>(
    deserializer: D,
    name: &'static str,
    keys: &'static [&'static str],
) -> Result<BTreeMap<String, toml::Value>, D::Error> {
    deserializer.deserialize_struct(name, keys, Table)
}

/// One contract's part of a flattened table.
fn part<T: serde::de::DeserializeOwned, E: de::Error>(
    table: &BTreeMap<String, toml::Value>,
) -> Result<T, E> {
    toml::Value::Table(table.clone().into_iter().collect())
        .try_into()
        .map_err(E::custom)
}

/// Reads an entry's keys as one table.
struct Table;

impl<'de> Visitor<'de> for Table {
    type Value = BTreeMap<String, toml::Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a table of each contract's values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut table = BTreeMap::new();
        while let Some((key, value)) = map.next_entry::<String, toml::Value>()? {
            table.insert(key, value);
        }
        Ok(table)
    }
}

/// The field names of a struct, as its derived `Deserialize` declares them.
fn fields_of<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
    let mut fields = Vec::new();
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

/// A deserializer that only records the fields a struct asks for, then stops.
struct FieldNames<'a>(&'a mut Vec<&'static str>);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only a struct's field names are read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend_from_slice(fields);
        Err(de::Error::custom("only a struct's field names are read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts take their own keys: every contract's are found, and a key of none
    /// is left for the entry to refuse.
    #[test]
    fn a_servers_own_values_are_each_contracts_keys() {
        let keys = ServerOptions::keys();
        for key in [
            "rerank_model",
            "speech_reference",
            "speech_model_class",
            "overlength",
            "reference",
        ] {
            assert!(keys.contains(&key), "{key}: {keys:?}");
        }
        assert_eq!(keys.len(), 11);
        assert_eq!(VendorParts::keys(), ["speech_endpoint", "speech_model"]);
    }
}
