/* A module that defines no MPI routine: it is loaded, with a warning. */
int nowrap_answer(void) { return 42; }
