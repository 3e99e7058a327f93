#include "arrays.hpp"

#include <Kokkos_Core.hpp>

#include "errors.hpp"
#include "tessera/core/kokkos_compat.hpp"

namespace py = pybind11;

namespace tessera::python {

py::array_t<float> float32_array(const py::handle& object, const std::string& argument) {
  if (!py::isinstance<py::array>(object))
    throw ArrayError(argument, std::string("expected a numpy array, got ") +
                                   py::str(py::type::of(object)).cast<std::string>() +
                                   " (numpy.asarray(..., dtype=numpy.float32) makes one)");
  const auto array = py::reinterpret_borrow<py::array>(object);
  if (!array.dtype().is(py::dtype::of<float>()))
    throw ArrayError(argument, "dtype " + py::str(array.dtype()).cast<std::string>() +
                                   ", expected float32 (convert with .astype(numpy.float32))");
  if (!(array.flags() & py::array::c_style))
    throw ArrayError(argument,
                     "not C-contiguous (a transposed or strided view); numpy.ascontiguousarray() makes a "
                     "contiguous copy");
  return py::reinterpret_borrow<py::array_t<float>>(object);
}

Shape shape_of(const py::array& array) {
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  return Shape(dims);
}

Tensor rows_as_tensor(const py::array_t<float>& array, int64_t first, int64_t rows) {
  Shape shape = shape_of(array);
  const int64_t per_row = array.ndim() > 0 && shape[0] > 0 ? shape.numel() / shape[0] : 0;
  shape[0] = rows;
  const float* start = array.data() + first * per_row;
  if constexpr (Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
    // An unmanaged view of numpy's memory: the model only reads its input.
    return Tensor(shape, DeviceView<float>(const_cast<float*>(start), static_cast<size_t>(rows * per_row)));
  } else {
    Tensor tensor(shape, "tessera::python_input");
    copy_into(tensor, 0, start, rows * per_row);
    return tensor;
  }
}

void copy_into(const Tensor& tensor, int64_t offset, const float* values, int64_t count) {
  Kokkos::View<const float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(values,
                                                                                      static_cast<size_t>(count));
  Kokkos::deep_copy(Kokkos::subview(tensor.view(), std::pair<int64_t, int64_t>(offset, offset + count)), host);
}

py::array_t<float> to_numpy(const Tensor& tensor) {
  const Shape& shape = tensor.shape();
  std::vector<py::ssize_t> dims;
  for (int i = 0; i < shape.rank(); ++i) dims.push_back(shape[i]);
  py::array_t<float> out(dims);
  if (tensor.type() == ElementType::fp32) {
    Kokkos::View<float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(out.mutable_data(),
                                                                                  static_cast<size_t>(tensor.numel()));
    Kokkos::deep_copy(host, Kokkos::subview(tensor.view(), std::pair<int64_t, int64_t>(0, tensor.numel())));
  } else {
    const std::vector<float> values = tensor.to_host();
    std::copy(values.begin(), values.end(), out.mutable_data());
  }
  return out;
}

}  // namespace tessera::python
