! Shared by the Fortran NAS-like kernels of this folder (compiled with
! each), as nas.h is for C: NPB's random number generator, the rank-count
! check and the kernel's argument. External procedures, not a module, so
! that no .mod file is involved.
!
! randlc: x = a x mod 2^46, returns x 2^-46, computed exactly in doubles.
double precision function randlc(x, a)
  implicit none
  double precision, intent(inout) :: x
  double precision, intent(in) :: a
  double precision, parameter :: r23 = 0.5d0**23, t23 = 2.0d0**23
  double precision, parameter :: r46 = r23 * r23, t46 = t23 * t23
  double precision :: t1, t2, t3, t4, a1, a2, x1, x2, z
  t1 = r23 * a
  a1 = aint(t1)
  a2 = a - t23 * a1
  t1 = r23 * x
  x1 = aint(t1)
  x2 = x - t23 * x1
  t1 = a1 * x2 + a2 * x1
  t2 = aint(r23 * t1)
  z = t1 - t23 * t2
  t3 = t23 * z + a2 * x2
  t4 = aint(r46 * t3)
  x = t3 - t46 * t4
  randlc = r46 * x
end function randlc

! skip: the seed n steps of multiplier a after seed.
double precision function skip(seed, a, n)
  implicit none
  double precision, intent(in) :: seed, a
  integer(8), intent(in) :: n
  double precision, external :: randlc
  double precision :: s, t, tt, dummy
  integer(8) :: k
  s = seed
  t = a
  k = n
  do while (k > 0)
    if (iand(k, 1_8) == 1) dummy = randlc(s, t)
    tt = t
    dummy = randlc(t, tt)
    k = k / 2
  end do
  skip = s
end function skip

! Stops every rank with a message from rank 0 when the run's rank count
! does not fit the kernel's problem (rule says which counts do).
subroutine need_ranks(ok, kernel, np, rule)
  implicit none
  include 'mpif.h'
  logical, intent(in) :: ok
  character(len=*), intent(in) :: kernel, rule
  integer, intent(in) :: np
  integer :: rank, ierr
  if (ok) return
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) write (0, '(a,a,i0,a,a)') kernel, ': ', np, ' ranks do not fit: ', rule
  call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
end subroutine need_ranks

! The kernel's first command-line argument, an integer, else default.
integer function int_arg(default)
  implicit none
  integer, intent(in) :: default
  character(len=32) :: arg
  int_arg = default
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) int_arg
  end if
end function int_arg
