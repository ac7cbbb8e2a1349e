//! `list`: the runner's stacks with their library versions, backends and capabilities.

use crate::protocol::{ListReply, StackInfo, PROTOCOL_VERSION};
use crate::{Capabilities, Stack};

use super::family::{listed_id, Family, StackVisitor};

/// The `list` reply: every stack of the family, under the id it is asked for by.
pub(super) fn list<F: Family>() -> ListReply {
    let stacks: Vec<StackInfo> = F::STACKS
        .iter()
        .map(|id| listed_id::<F>(id))
        .filter_map(|id| Some(StackInfo { id: id.clone(), ..F::with_stack(&id, Describe)? }))
        .collect();
    ListReply { protocol_version: PROTOCOL_VERSION, stacks, build: Some(crate::build::this()), full_speed: true }
}

struct Describe;

impl StackVisitor for Describe {
    type Output = StackInfo;
    fn visit<T: Stack>(self, stack: &T) -> StackInfo {
        // The allocators are the runner's: its malloc can switch when it is tlsbench's.
        let allocators = match crate::allocator::switchable() {
            true => crate::allocator::Allocator::ALL.to_vec(),
            false => Vec::new(),
        };
        // Every stack of a Rust runner can run as several pairs on threads, with their own
        // configs or sharing one of each, pinned one per CPU
        // (`sample --threads N --contexts own|shared --cpus LIST`).
        StackInfo {
            id: stack.id().to_string(),
            library: stack.library(),
            tls_library: Some(stack.tls_library()),
            backend: Some(stack.backend()),
            capabilities: Capabilities {
                allocators,
                threads: true,
                shared_contexts: true,
                pin_threads: true,
                ..stack.capabilities()
            },
        }
    }
}
