//! Values of types each contract defines for itself (rerank's facts, its settings),
//! kept by the shared engine without knowing them: a new contract adds its own
//! without touching the session. The registry of contracts reads them back by type,
//! for the report.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;

/// A value a contract keeps in the session: any type that can be copied and shown.
pub trait Part: Any + fmt::Debug + Send + Sync {
    /// A copy behind the trait object (a session hands out copies of its facts).
    fn boxed(&self) -> Box<dyn Part>;
}

impl<T: Any + fmt::Debug + Send + Sync + Clone> Part for T {
    fn boxed(&self) -> Box<dyn Part> {
        Box::new(self.clone())
    }
}

/// One value of each contract's type, where it has one.
#[derive(Debug, Default)]
pub struct ByContract(BTreeMap<TypeId, Box<dyn Part>>);

impl Clone for ByContract {
    fn clone(&self) -> Self {
        ByContract(
            self.0
                .iter()
                .map(|(k, v)| (*k, v.as_ref().boxed()))
                .collect(),
        )
    }
}

impl ByContract {
    /// The value of type `T`, where there is one.
    pub fn get<T: Part>(&self) -> Option<&T> {
        let value: &dyn Any = self.0.get(&TypeId::of::<T>())?.as_ref();
        value.downcast_ref()
    }

    /// The value of type `T` to write, its default where there was none.
    pub fn get_mut<T: Part + Default>(&mut self) -> &mut T {
        let slot = self
            .0
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        let value: &mut dyn Any = slot.as_mut();
        value
            .downcast_mut()
            .expect("each entry is keyed by its own type")
    }

    /// The store with `value` in its type's place.
    pub fn with<T: Part>(mut self, value: T) -> Self {
        self.0.insert(TypeId::of::<T>(), Box::new(value));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, Default, PartialEq)]
    struct Ours(u32);

    #[derive(Clone, Debug, Default, PartialEq)]
    struct Theirs(&'static str);

    /// Each type has its own place, and a copy of the store is a copy of its values.
    #[test]
    fn each_contracts_value_is_kept_by_its_type() {
        let mut store = ByContract::default().with(Ours(1));
        assert_eq!(store.get::<Ours>(), Some(&Ours(1)));
        assert_eq!(store.get::<Theirs>(), None);
        store.get_mut::<Theirs>().0 = "x";
        let copy = store.clone();
        store.get_mut::<Ours>().0 = 2;
        assert_eq!(copy.get::<Ours>(), Some(&Ours(1)));
        assert_eq!(copy.get::<Theirs>(), Some(&Theirs("x")));
        assert_eq!(store.get::<Ours>(), Some(&Ours(2)));
    }
}
