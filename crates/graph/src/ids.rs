//! Small copyable ids. Each indexes one table of the [`crate::Program`] or
//! [`crate::Execution`].

macro_rules! id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id!(
    /// A concrete thread (an explicit thread, a kernel thread or a host thread).
    ThreadId
);
id!(
    /// An instance of a declared barrier object (one per scope instance).
    BarrierId
);
id!(
    /// An instance of a declared memory location.
    LocId
);
id!(
    /// A register of one code body.
    RegId
);
id!(
    /// A lowered body, shared by every thread of a kernel.
    CodeId
);
id!(
    /// An event of an [`crate::Execution`].
    EventId
);
