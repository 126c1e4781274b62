! One Fortran MPI program for the three bindings, chosen by the
! preprocessor: -DF08 (use mpi_f08), -DUSE_MPI (use mpi), neither
! (include 'mpif.h'). On every rank it makes exactly these calls, which
! tests/fortran.rs expects each module in the chain to see:
!   Init 1, Comm_rank 1, Comm_size 1, Send 1, Recv 1, Irecv 1, Isend 1,
!   Waitall 1, Allreduce 2, Bcast 1, Comm_split 1, Comm_dup 1, Barrier 2,
!   Comm_free 2, Gatherv 1, Finalize 1,
! and, through the C library clib.c, Comm_rank 1, Comm_size 1 and Sendrecv 1
! (and MPI_Comm_f2c, a function under Open MPI but a macro under MPICH).
! It prints one result line per rank, the same with or without tools.
#if defined(F08)
#define HANDLE(t) type(t)
#define FCOMM(c) c%MPI_VAL
#else
#define HANDLE(t) integer
#define FCOMM(c) c
#endif

program calls
#if defined(F08)
  use mpi_f08
#elif defined(USE_MPI)
  use mpi
#endif
  implicit none
#if !defined(F08) && !defined(USE_MPI)
  include 'mpif.h'
#endif
  interface
    subroutine clib_exchange(fcomm, received) bind(C, name='clib_exchange')
      integer, intent(in) :: fcomm
      integer, intent(out) :: received
    end subroutine
  end interface
  integer :: ierr, rank, nranks, left, right, i, total, subtotal, bval
  integer :: token, ring, nb, from_c
  integer :: pair(2), gathered(128), counts(64), displs(64)
  HANDLE(MPI_Comm) :: sub, dup
  HANDLE(MPI_Request) :: reqs(2)
#if defined(F08)
  type(MPI_Status) :: status
#else
  integer :: status(MPI_STATUS_SIZE)
#endif

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  ! A blocking ring: even ranks send first; odd ranks receive from any source.
  token = 100 + rank
  if (mod(rank, 2) == 0) then
    call MPI_Send(token, 1, MPI_INTEGER, right, 1, MPI_COMM_WORLD, ierr)  ! FSITE_SEND
    call MPI_Recv(ring, 1, MPI_INTEGER, left, 1, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_Recv(ring, 1, MPI_INTEGER, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, status, ierr)
    call MPI_Send(token, 1, MPI_INTEGER, right, 1, MPI_COMM_WORLD, ierr)  ! FSITE_SEND2
  end if

  ! The same ring with requests.
  call MPI_Irecv(nb, 1, MPI_INTEGER, left, 2, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(token, 1, MPI_INTEGER, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)

  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  bval = 0
  if (rank == 0) bval = 1234
  call MPI_Bcast(bval, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)

  ! A communicator of its own, in reverse rank order, and its duplicate.
  call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, sub, ierr)
  call MPI_Comm_dup(sub, dup, ierr)
  call MPI_Allreduce(rank * rank, subtotal, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  call MPI_Barrier(sub, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(sub, ierr)

  ! Gatherv: its binding also asks the size of the communicator.
  pair = (/ rank, 10 * rank /)
  do i = 1, nranks
    counts(i) = 2
    displs(i) = 2 * (i - 1)
  end do
  gathered = 0
  call MPI_Gatherv(pair, 2, MPI_INTEGER, gathered, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)

  ! A C library of the application, which calls MPI itself.
  call clib_exchange(FCOMM(MPI_COMM_WORLD), from_c)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  print '(A,I0,A,I0,A,I0,A,I0,A,I0,A,I0,A,I0,A,I0)', 'calls result rank ', rank, ': ring ', ring, &
    ' nb ', nb, ' total ', total, ' bcast ', bval, ' sub ', subtotal, ' gathered ', sum(gathered), &
    ' from_c ', from_c
  call MPI_Finalize(ierr)
end program calls
