! Per-rank globals in a Fortran COMMON block, for virtual ranks: each
! rank bumps its counter, table and scale before and after a barrier
! (under `pnmpi run --vranks` the other ranks run in between), then rank
! 0 gathers and prints them, so a normal run and a virtual-rank run print
! the same text.
!
! prints: vcommon: RANK COUNTER TABLE SCALE SUM
program vcommon
  implicit none
  include 'mpif.h'
  integer :: counter, table(8)
  double precision :: scale
  common /state/ scale, counter, table
  integer :: rank, nranks, ierr, i, total
  integer :: line(5)
  integer, allocatable :: every(:)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  counter = 0
  table = 0
  scale = 1.5d0
  call bump(rank)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call bump(rank)
  call MPI_Allreduce(counter, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  line = (/ rank, counter, table(mod(rank, 8) + 1), int(scale), total /)
  allocate(every(5 * nranks))
  call MPI_Gather(line, 5, MPI_INTEGER, every, 5, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 0, nranks - 1
      write (*, '(A, 5I12)') 'vcommon:', every(5 * i + 1:5 * i + 5)
    end do
  end if
  call MPI_Finalize(ierr)
end program vcommon

subroutine bump(r)
  implicit none
  integer, intent(in) :: r
  integer :: counter, table(8)
  double precision :: scale
  common /state/ scale, counter, table
  counter = counter + r + 1
  table(mod(r, 8) + 1) = table(mod(r, 8) + 1) + r
  scale = scale * (r + 1)
end subroutine bump
