! FT in Fortran (`use mpi`): the same kernel as ft.c, same output. Random
! initial data (NPB's randlc), a forward 3-D FFT, then ITERS times: evolve
! the spectrum, inverse 3-D FFT, NPB's checksum of 1,024 points. z-slabs
! for the x and y transforms, MPI_Alltoall (MPI_DOUBLE_COMPLEX) to x-slabs
! for the z transform, and back.
!
! Rank counts: a divisor of 256.
! prints (rank 0): ft: np N grid NX NY NZ
!                  ft: iter T checksum RE IM
!                  ft: verified yes|NO
module ft_data
  implicit none
  integer, parameter :: nx = 256, ny = 8, nz = 256, iters = 6
  double precision, parameter :: alpha = 1d-6, pi = 3.141592653589793238d0
  integer :: np, nzl, nxl
  complex(8), allocatable :: sendbuf(:), recvbuf(:), tmp(:)
contains
  ! In-place radix-2 FFT of v(0:n-1), sign -1 forward, +1 inverse.
  subroutine fft(v, n, sign)
    integer, intent(in) :: n, sign
    complex(8), intent(inout) :: v(0:n - 1)
    integer :: i, j, bit, len, k
    complex(8) :: t, w, a, b
    double precision :: angle
    j = 0
    do i = 1, n - 1
      bit = n / 2
      do while (iand(j, bit) /= 0)
        j = ieor(j, bit)
        bit = bit / 2
      end do
      j = ieor(j, bit)
      if (i < j) then
        t = v(i)
        v(i) = v(j)
        v(j) = t
      end if
    end do
    len = 2
    do while (len <= n)
      do k = 0, len / 2 - 1
        angle = sign * 2 * pi * k / len
        w = cmplx(cos(angle), sin(angle), 8)
        do i = 0, n - 1, len
          a = v(i + k)
          b = w * v(i + k + len / 2)
          v(i + k) = a + b
          v(i + k + len / 2) = a - b
        end do
      end do
      len = len * 2
    end do
  end subroutine fft

  ! z-slabs a(x, y, zl): the x and y transforms.
  subroutine fft_xy(a, sign)
    complex(8), intent(inout) :: a(0:nx - 1, 0:ny - 1, 0:nzl - 1)
    integer, intent(in) :: sign
    integer :: zl, y, x
    do zl = 0, nzl - 1
      do y = 0, ny - 1
        call fft(a(:, y, zl), nx, sign)
      end do
      do x = 0, nx - 1
        tmp(0:ny - 1) = a(x, :, zl)
        call fft(tmp, ny, sign)
        a(x, :, zl) = tmp(0:ny - 1)
      end do
    end do
  end subroutine fft_xy

  ! x-slabs b(z, y, xl): the z transforms.
  subroutine fft_z(b, sign)
    complex(8), intent(inout) :: b(0:nz - 1, 0:ny - 1, 0:nxl - 1)
    integer, intent(in) :: sign
    integer :: xl, y
    do xl = 0, nxl - 1
      do y = 0, ny - 1
        call fft(b(:, y, xl), nz, sign)
      end do
    end do
  end subroutine fft_z

  ! z-slabs a(x, y, zl) to x-slabs b(z, y, xl) (to_x), or back.
  subroutine transpose(a, b, to_x)
    use mpi
    complex(8), intent(inout) :: a(0:nx - 1, 0:ny - 1, 0:nzl - 1)
    complex(8), intent(inout) :: b(0:nz - 1, 0:ny - 1, 0:nxl - 1)
    logical, intent(in) :: to_x
    integer :: d, i, y, j, at, ni, nj, block, ierr
    ni = merge(nzl, nxl, to_x)
    nj = merge(nxl, nzl, to_x)
    block = nzl * ny * nxl
    at = 0
    do d = 0, np - 1
      do i = 0, ni - 1
        do y = 0, ny - 1
          do j = 0, nj - 1
            if (to_x) then
              sendbuf(at) = a(d * nxl + j, y, i)
            else
              sendbuf(at) = b(d * nzl + j, y, i)
            end if
            at = at + 1
          end do
        end do
      end do
    end do
    call MPI_Alltoall(sendbuf, block, MPI_DOUBLE_COMPLEX, recvbuf, block, MPI_DOUBLE_COMPLEX, &
      MPI_COMM_WORLD, ierr)
    at = 0
    do d = 0, np - 1
      do i = 0, ni - 1
        do y = 0, ny - 1
          do j = 0, nj - 1
            if (to_x) then
              b(d * nzl + i, y, j) = recvbuf(at)
            else
              a(d * nxl + i, y, j) = recvbuf(at)
            end if
            at = at + 1
          end do
        end do
      end do
    end do
  end subroutine transpose

  integer function wave(k, n)
    integer, intent(in) :: k, n
    wave = k
    if (k >= n / 2) wave = k - n
  end function wave
end module ft_data

program ft
  use mpi
  use ft_data
  implicit none
  double precision, parameter :: a_mult = 1220703125d0
  double precision, external :: randlc, skip
  complex(8), allocatable :: u0(:, :, :), a(:, :, :), u1(:, :, :), b(:, :, :)
  integer :: rank, ierr, x, y, z, xl, zl, t, j, q, r, s, kx, ky, kz
  double precision :: seed, re, k2, ntotal, err, worst
  complex(8) :: total, csum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call need_ranks(mod(nz, np) == 0 .and. mod(nx, np) == 0, 'ft', np, 'the rank count must divide 256')
  nzl = nz / np
  nxl = nx / np
  allocate (u0(0:nx - 1, 0:ny - 1, 0:nzl - 1), a(0:nx - 1, 0:ny - 1, 0:nzl - 1))
  allocate (u1(0:nz - 1, 0:ny - 1, 0:nxl - 1), b(0:nz - 1, 0:ny - 1, 0:nxl - 1))
  allocate (sendbuf(0:nzl * ny * nx - 1), recvbuf(0:nzl * ny * nx - 1), tmp(0:max(nx, nz) - 1))

  seed = skip(314159265d0, a_mult, 2 * int(nx, 8) * ny * nzl * rank)
  do zl = 0, nzl - 1
    do y = 0, ny - 1
      do x = 0, nx - 1
        re = randlc(seed, a_mult)
        u0(x, y, zl) = cmplx(re, randlc(seed, a_mult), 8)
      end do
    end do
  end do
  a = u0
  call fft_xy(a, -1)
  call transpose(a, u1, .true.)
  call fft_z(u1, -1)

  if (rank == 0) then
    write (*, '(a,i0,a,i0,1x,i0,1x,i0)') 'ft: np ', np, ' grid ', nx, ny, nz
    flush (6)
  end if
  ntotal = dble(nx) * ny * nz
  do t = 1, iters
    do xl = 0, nxl - 1
      do y = 0, ny - 1
        do z = 0, nz - 1
          kx = wave(rank * nxl + xl, nx)
          ky = wave(y, ny)
          kz = wave(z, nz)
          k2 = dble(kx) * kx + dble(ky) * ky + dble(kz) * kz
          b(z, y, xl) = u1(z, y, xl) * exp(-4 * alpha * pi * pi * k2 * t)
        end do
      end do
    end do
    call fft_z(b, 1)
    call transpose(a, b, .false.)
    call fft_xy(a, 1)
    csum = 0
    do j = 1, 1024
      q = mod(j, nx)
      r = mod(3 * j, ny)
      s = mod(5 * j, nz)
      if (s / nzl == rank) csum = csum + a(q, r, mod(s, nzl)) / ntotal
    end do
    call MPI_Allreduce(csum, total, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      write (*, '(a,i0,a,es23.15,es23.15)') 'ft: iter ', t, ' checksum ', real(total), aimag(total)
      flush (6)
    end if
  end do
  call fft_z(u1, 1)
  call transpose(a, u1, .false.)
  call fft_xy(a, 1)
  err = maxval(abs(a / ntotal - u0))
  call MPI_Allreduce(err, worst, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (worst < 1d-12) then
      write (*, '(a)') 'ft: verified yes'
    else
      write (*, '(a)') 'ft: verified NO'
    end if
  end if
  call MPI_Finalize(ierr)
end program ft
