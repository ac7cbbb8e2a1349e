//! A runner's family of stacks, and the stack ids resolved to their types, once: from there on
//! everything is generic over the chosen stack or pair.

use std::marker::PhantomData;

use crate::Stack;

/// The stacks one runner binary links, by id. Declare one with [`family!`](crate::family).
pub trait Family {
    /// Every stack id of the family.
    const STACKS: &'static [&'static str];

    /// The release of the library the family's stacks are at, in a runner of a stack at another
    /// release than the default one (`ID@RELEASE`, e.g. `openssl@3.5`): its stacks are listed
    /// and asked for as `ID@RELEASE`, never as `ID`. None: the default runners'.
    const RELEASE: Option<&'static str> = None;

    /// Calls `visitor` with the stack called `id`, or returns None if the family lacks it.
    fn with_stack<V: StackVisitor>(id: &str, visitor: V) -> Option<V::Output>;
}

/// Something to do with one stack, whatever its type.
pub trait StackVisitor {
    type Output;
    fn visit<T: Stack>(self, stack: &T) -> Self::Output;
}

/// Something to do with a client stack and a server stack, whatever their types.
pub trait PairVisitor {
    type Output;
    fn visit<C: Stack, S: Stack>(self, client: &C, server: &S) -> Self::Output;
}

/// Declares a runner family: `family!(OpenSslFamily { "openssl" => OpenSsl, ... });`, or for a
/// runner of stacks at another release of their library, `family!(Name at "3.5", { ... })`
/// (see [`Family::RELEASE`]).
#[macro_export]
macro_rules! family {
    ($name:ident { $($id:literal => $stack:expr),+ $(,)? }) => {
        $crate::family!(@declare $name, None, { $($id => $stack),+ });
    };
    ($name:ident at $release:expr, { $($id:literal => $stack:expr),+ $(,)? }) => {
        $crate::family!(@declare $name, Some($release), { $($id => $stack),+ });
    };
    (@declare $name:ident, $release:expr, { $($id:literal => $stack:expr),+ }) => {
        pub struct $name;

        impl $crate::runner::Family for $name {
            const STACKS: &'static [&'static str] = &[$($id),+];
            const RELEASE: Option<&'static str> = $release;

            fn with_stack<V: $crate::runner::StackVisitor>(id: &str, visitor: V) -> Option<V::Output> {
                match $crate::runner::local_id::<Self>(id)? {
                    $($id => Some(visitor.visit(&$stack)),)+
                    _ => None,
                }
            }
        }
    };
}

/// The family's own id of the stack asked for as `id`: `id` itself, or in a family of another
/// release, `ID` of `ID@RELEASE` (None for any other id).
pub fn local_id<F: Family>(id: &str) -> Option<&str> {
    match F::RELEASE {
        None => Some(id),
        Some(release) => id.strip_suffix(release)?.strip_suffix('@'),
    }
}

/// The family's stacks as they are listed, for messages.
pub(super) fn listed_ids<F: Family>() -> String {
    F::STACKS.iter().map(|id| listed_id::<F>(id)).collect::<Vec<_>>().join(", ")
}

/// The id a family's stack is listed and asked for under: `ID`, or `ID@RELEASE`.
pub(super) fn listed_id<F: Family>(id: &str) -> String {
    match F::RELEASE {
        None => id.to_string(),
        Some(release) => format!("{id}@{release}"),
    }
}

/// Calls `visitor` with the client stack and the server stack named, statically typed.
pub fn with_pair<F: Family, V: PairVisitor>(client: &str, server: &str, visitor: V) -> Result<V::Output, String> {
    let unknown = |id: &str| format!("stack `{id}` is not in this runner (it has: {})", listed_ids::<F>());
    F::with_stack(client, ThenServer::<F, V> { server, visitor, family: PhantomData })
        .ok_or_else(|| unknown(client))?
        .ok_or_else(|| unknown(server))
}

struct ThenServer<'a, F, V> {
    server: &'a str,
    visitor: V,
    family: PhantomData<F>,
}

impl<F: Family, V: PairVisitor> StackVisitor for ThenServer<'_, F, V> {
    type Output = Option<V::Output>;
    fn visit<C: Stack>(self, client: &C) -> Self::Output {
        F::with_stack(self.server, WithClient { client, visitor: self.visitor })
    }
}

struct WithClient<'a, C, V> {
    client: &'a C,
    visitor: V,
}

impl<C: Stack, V: PairVisitor> StackVisitor for WithClient<'_, C, V> {
    type Output = V::Output;
    fn visit<S: Stack>(self, server: &S) -> V::Output {
        self.visitor.visit(self.client, server)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family at another release; its stacks are never visited here.
    struct AtRelease;

    impl Family for AtRelease {
        const STACKS: &'static [&'static str] = &["openssl", "rustls-ring"];
        const RELEASE: Option<&'static str> = Some("3.5");

        fn with_stack<V: StackVisitor>(_: &str, _: V) -> Option<V::Output> {
            None
        }
    }

    struct Default;

    impl Family for Default {
        const STACKS: &'static [&'static str] = &["openssl"];

        fn with_stack<V: StackVisitor>(_: &str, _: V) -> Option<V::Output> {
            None
        }
    }

    #[test]
    fn a_family_at_another_release_answers_to_its_ids_with_the_release_only() {
        assert_eq!(local_id::<AtRelease>("openssl@3.5"), Some("openssl"));
        assert_eq!(local_id::<AtRelease>("openssl"), None);
        assert_eq!(local_id::<AtRelease>("openssl@3.6"), None);
        assert_eq!(local_id::<AtRelease>("openssl@13.5"), None);
        assert_eq!(listed_ids::<AtRelease>(), "openssl@3.5, rustls-ring@3.5");
        assert_eq!(local_id::<Default>("openssl"), Some("openssl"));
        assert_eq!(listed_ids::<Default>(), "openssl");
    }
}
