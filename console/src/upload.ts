/** Uploads a file to Storage with XMLHttpRequest, whose upload events drive a progress bar. */
import { ApiError, type ApiKeys, messageOf, objectPath, projectBase, storageHeaders } from './api';

export function uploadObject(
  ref: string,
  keys: ApiKeys,
  bucket: string,
  name: string,
  file: File,
  onProgress: (fraction: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${projectBase(ref)}/storage/v1/object/${objectPath(bucket, name)}`);
    for (const [k, v] of Object.entries(storageHeaders(keys))) xhr.setRequestHeader(k, v);
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    xhr.setRequestHeader('x-upsert', 'true');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve();
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = undefined;
      }
      reject(new ApiError(xhr.status, messageOf(body, xhr.status)));
    };
    xhr.onerror = () => reject(new Error('Upload failed: the server could not be reached'));
    xhr.send(file);
  });
}
