package session

import "syscall"

// Magic numbers of statfs(2)'s f_type for the file systems the live files
// care about.
var fsNames = map[int64]string{
	0x01021994: "tmpfs", 0x858458f6: "ramfs",
	0x6969: "NFS", 0x0bd00bd0: "Lustre", 0x47504653: "GPFS", 0x19830326: "BeeGFS",
	0x00c36400: "CephFS", 0xff534d42: "CIFS", 0xfe534d42: "SMB2", 0x65735546: "FUSE",
	0xef53: "ext4", 0x58465342: "XFS", 0x9123683e: "Btrfs", 0x794c7630: "overlayfs",
}

// sharedFS says whether a file system kind is a network or cluster file
// system, where a live file's stores would wait for the network.
var sharedFS = map[string]bool{"NFS": true, "Lustre": true, "GPFS": true, "BeeGFS": true, "CephFS": true, "CIFS": true, "SMB2": true, "FUSE": true}

// FSInfo returns the kind of the file system holding path ("" when
// unknown) and its free bytes for an unprivileged user.
func FSInfo(path string) (kind string, free uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return "", 0, err
	}
	return fsNames[int64(st.Type)], uint64(st.Bavail) * uint64(st.Bsize), nil
}
