// Internal: making an in-memory HDF5 file image (H5Fget_file_image of a
// file still open for writing) byte-for-byte the file HDF5 would have closed.
//
// HDF5 1.10 clears the "open for writing" status flags of a version 2/3
// superblock in the image it returns but keeps the checksum computed with
// them set, so HDF5 itself refuses the written image ("incorrect metadata
// checksum"). SealImageSuperblock recomputes it (Jenkins' lookup3, as HDF5's
// H5_checksum_metadata).
#ifndef XWIRES_DATASET_STORE_H5_IMAGE_H_
#define XWIRES_DATASET_STORE_H5_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xw::h5 {

// Jenkins' lookup3 hash ("hashlittle") of `n` bytes: HDF5's metadata
// checksum with initval 0.
uint32_t Lookup3(const unsigned char* p, size_t n, uint32_t initval);

// Rewrites the checksum of a version 2 or 3 superblock at the start of
// `image` (no user block). Other images are left alone. Returns false if
// the image is too short to hold the superblock it announces.
bool SealImageSuperblock(std::vector<char>& image);

}  // namespace xw::h5

#endif  // XWIRES_DATASET_STORE_H5_IMAGE_H_
