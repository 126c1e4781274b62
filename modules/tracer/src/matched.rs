//! Matched probes' messages: `MPI_Mprobe` and `MPI_Improbe` name a message
//! by a handle that `MPI_Mrecv` and `MPI_Imrecv` receive later, possibly on
//! another thread, without naming the communicator. The receive is traced
//! on the probe's communicator, kept here from the probe to the receive.

use std::collections::HashMap;
use std::sync::Mutex;

/// Message handle -> its communicator's handle. Programs keep few matched
/// messages outstanding, and only they use this table.
static COMMS: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);

/// A probe matched message `message` on communicator `comm`.
pub fn probed(message: u64, comm: u64) {
    let mut comms = COMMS.lock().unwrap_or_else(|e| e.into_inner());
    comms.get_or_insert_with(HashMap::new).insert(message, comm);
}

/// The communicator of a probed message that is being received, if a
/// traced probe matched it.
pub fn received(message: u64) -> Option<u64> {
    let mut comms = COMMS.lock().unwrap_or_else(|e| e.into_inner());
    comms.as_mut()?.remove(&message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_received_once_on_its_probe_communicator() {
        probed(0x1000, 7);
        probed(0x2000, 9);
        assert_eq!(received(0x2000), Some(9));
        assert_eq!(received(0x1000), Some(7));
        assert_eq!(received(0x1000), None);
        assert_eq!(received(0x3000), None);
    }
}
