/* A shared library of the application's own, with state per rank: a
 * static counter and a thread-local one. Under virtual ranks each rank
 * must see its own copies (tests/vranks.rs, with ownlib_main.c). */
static int calls;
static __thread int tcalls;

int ownlib_bump(int by)
{
    calls += by;
    tcalls += 2 * by;
    return calls * 1000 + tcalls;
}
