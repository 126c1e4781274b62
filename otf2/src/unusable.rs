//! Counters for the OTF2 records that replay cannot use (OpenMP, threads,
//! one-sided polls and memory syncs, I/O, metrics ...): each is counted under its record name
//! and category and reported, never silently dropped. Records unknown to
//! this libotf2 are counted too.

use crate::ffi::*;
use crate::user::Code;
use std::os::raw::c_void;

/// Defines, for each record, a callback of its exact signature that counts
/// it, and [`register`], which installs them all.
macro_rules! unusable {
    ($($record:ident, $category:expr, $setter:ident, ($($arg:ty),*);)*) => {
        $(
            #[allow(non_snake_case, clippy::too_many_arguments)]
            unsafe extern "C" fn $record(
                _l: OTF2_LocationRef,
                _t: OTF2_TimeStamp,
                _p: u64,
                user: *mut c_void,
                _a: *mut OTF2_AttributeList,
                $(_: $arg),*
            ) -> Code {
                crate::user::on_events(user, |a| a.unusable(stringify!($record), $category))
            }
        )*

        /// Installs the counters in `c` (a live callback set).
        pub(crate) fn register(c: *mut OTF2_EvtReaderCallbacks) {
            // SAFETY: `c` is live; each function has its record's exact signature.
            unsafe {
                OTF2_EvtReaderCallbacks_SetUnknownCallback(c, Some(Unknown));
                $( $setter(c, Some($record)); )*
            }
        }
    };
}

#[allow(non_snake_case)]
unsafe extern "C" fn Unknown(
    _l: OTF2_LocationRef,
    _t: OTF2_TimeStamp,
    _p: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
) -> Code {
    crate::user::on_events(user, |a| a.unusable("Unknown", "records unknown to libotf2 3.0"))
}

// Generated from the callback types bindgen derives from
// OTF2_EvtReaderCallbacks.h (every record this crate does not replay).
unusable! {
BufferFlush, "measurement buffer flushes", OTF2_EvtReaderCallbacks_SetBufferFlushCallback, (OTF2_TimeStamp);
MeasurementOnOff, "measurement on/off switches", OTF2_EvtReaderCallbacks_SetMeasurementOnOffCallback, (OTF2_MeasurementMode);
MpiRequestTest, "MPI request tests that completed nothing", OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback, (u64);
OmpFork, "OpenMP", OTF2_EvtReaderCallbacks_SetOmpForkCallback, (u32);
OmpJoin, "OpenMP", OTF2_EvtReaderCallbacks_SetOmpJoinCallback, ();
OmpAcquireLock, "OpenMP", OTF2_EvtReaderCallbacks_SetOmpAcquireLockCallback, (u32, u32);
OmpReleaseLock, "OpenMP", OTF2_EvtReaderCallbacks_SetOmpReleaseLockCallback, (u32, u32);
OmpTaskCreate, "OpenMP", OTF2_EvtReaderCallbacks_SetOmpTaskCreateCallback, (u64);
OmpTaskSwitch, "OpenMP", OTF2_EvtReaderCallbacks_SetOmpTaskSwitchCallback, (u64);
OmpTaskComplete, "OpenMP", OTF2_EvtReaderCallbacks_SetOmpTaskCompleteCallback, (u64);
Metric, "metrics", OTF2_EvtReaderCallbacks_SetMetricCallback, (OTF2_MetricRef, u8, *const OTF2_Type, *const OTF2_MetricValue);
ParameterString, "parameters", OTF2_EvtReaderCallbacks_SetParameterStringCallback, (OTF2_ParameterRef, OTF2_StringRef);
ParameterInt, "parameters", OTF2_EvtReaderCallbacks_SetParameterIntCallback, (OTF2_ParameterRef, i64);
ParameterUnsignedInt, "parameters", OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback, (OTF2_ParameterRef, u64);
RmaTryLock, "MPI one-sided (RMA)", OTF2_EvtReaderCallbacks_SetRmaTryLockCallback, (OTF2_RmaWinRef, u32, u64, OTF2_LockType);
RmaSync, "MPI one-sided (RMA)", OTF2_EvtReaderCallbacks_SetRmaSyncCallback, (OTF2_RmaWinRef, u32, OTF2_RmaSyncType);
RmaWaitChange, "MPI one-sided (RMA)", OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback, (OTF2_RmaWinRef);
ThreadFork, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadForkCallback, (OTF2_Paradigm, u32);
ThreadJoin, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadJoinCallback, (OTF2_Paradigm);
ThreadTeamBegin, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadTeamBeginCallback, (OTF2_CommRef);
ThreadTeamEnd, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadTeamEndCallback, (OTF2_CommRef);
ThreadAcquireLock, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback, (OTF2_Paradigm, u32, u32);
ThreadReleaseLock, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback, (OTF2_Paradigm, u32, u32);
ThreadTaskCreate, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadTaskCreateCallback, (OTF2_CommRef, u32, u32);
ThreadTaskSwitch, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadTaskSwitchCallback, (OTF2_CommRef, u32, u32);
ThreadTaskComplete, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadTaskCompleteCallback, (OTF2_CommRef, u32, u32);
ThreadCreate, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadCreateCallback, (OTF2_CommRef, u64);
ThreadBegin, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadBeginCallback, (OTF2_CommRef, u64);
ThreadWait, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadWaitCallback, (OTF2_CommRef, u64);
ThreadEnd, "threads and tasks", OTF2_EvtReaderCallbacks_SetThreadEndCallback, (OTF2_CommRef, u64);
CallingContextEnter, "calling-context samples", OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback, (OTF2_CallingContextRef, u32);
CallingContextLeave, "calling-context samples", OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback, (OTF2_CallingContextRef);
CallingContextSample, "calling-context samples", OTF2_EvtReaderCallbacks_SetCallingContextSampleCallback, (OTF2_CallingContextRef, u32, OTF2_InterruptGeneratorRef);
IoCreateHandle, "I/O", OTF2_EvtReaderCallbacks_SetIoCreateHandleCallback, (OTF2_IoHandleRef, OTF2_IoAccessMode, OTF2_IoCreationFlag, OTF2_IoStatusFlag);
IoDestroyHandle, "I/O", OTF2_EvtReaderCallbacks_SetIoDestroyHandleCallback, (OTF2_IoHandleRef);
IoDuplicateHandle, "I/O", OTF2_EvtReaderCallbacks_SetIoDuplicateHandleCallback, (OTF2_IoHandleRef, OTF2_IoHandleRef, OTF2_IoStatusFlag);
IoSeek, "I/O", OTF2_EvtReaderCallbacks_SetIoSeekCallback, (OTF2_IoHandleRef, i64, OTF2_IoSeekOption, u64);
IoChangeStatusFlags, "I/O", OTF2_EvtReaderCallbacks_SetIoChangeStatusFlagsCallback, (OTF2_IoHandleRef, OTF2_IoStatusFlag);
IoDeleteFile, "I/O", OTF2_EvtReaderCallbacks_SetIoDeleteFileCallback, (OTF2_IoParadigmRef, OTF2_IoFileRef);
IoOperationBegin, "I/O", OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback, (OTF2_IoHandleRef, OTF2_IoOperationMode, OTF2_IoOperationFlag, u64, u64);
IoOperationTest, "I/O", OTF2_EvtReaderCallbacks_SetIoOperationTestCallback, (OTF2_IoHandleRef, u64);
IoOperationIssued, "I/O", OTF2_EvtReaderCallbacks_SetIoOperationIssuedCallback, (OTF2_IoHandleRef, u64);
IoOperationComplete, "I/O", OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback, (OTF2_IoHandleRef, u64, u64);
IoOperationCancelled, "I/O", OTF2_EvtReaderCallbacks_SetIoOperationCancelledCallback, (OTF2_IoHandleRef, u64);
IoAcquireLock, "I/O", OTF2_EvtReaderCallbacks_SetIoAcquireLockCallback, (OTF2_IoHandleRef, OTF2_LockType);
IoReleaseLock, "I/O", OTF2_EvtReaderCallbacks_SetIoReleaseLockCallback, (OTF2_IoHandleRef, OTF2_LockType);
IoTryLock, "I/O", OTF2_EvtReaderCallbacks_SetIoTryLockCallback, (OTF2_IoHandleRef, OTF2_LockType);
}
