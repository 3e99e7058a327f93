#pragma once
// numpy arrays in and out of Tessera tensors.
#include <cstdint>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "tessera/core/shape.hpp"
#include "tessera/core/tensor.hpp"

namespace tessera::python {

/// `object` as a C-contiguous float32 numpy array, without a copy. Anything else (a list, an
/// array of another dtype, a transposed view, ...) is refused with ArrayError naming
/// `argument` and how to convert it: converting silently would copy arrays of many GiB.
pybind11::array_t<float> float32_array(const pybind11::handle& object, const std::string& argument);

/// The shape of `array`.
Shape shape_of(const pybind11::array& array);

/// Rows [first, first + rows) of `array` (a C-contiguous float32 array) as a tensor of that
/// many rows: the array's own memory where the model's memory space is the host's, a copy in
/// device memory otherwise. The tensor must not outlive the array.
Tensor rows_as_tensor(const pybind11::array_t<float>& array, int64_t first, int64_t rows);

/// Copies `count` floats from host memory into `tensor` (fp32) from element `offset` on.
void copy_into(const Tensor& tensor, int64_t offset, const float* values, int64_t count);

/// A new numpy array (float32, the tensor's shape) holding the tensor's values.
pybind11::array_t<float> to_numpy(const Tensor& tensor);

}  // namespace tessera::python
