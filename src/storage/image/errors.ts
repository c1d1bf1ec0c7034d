/**
 * Render failures, worded as the reference words imgproxy's (its renderer maps imgproxy's 422s to
 * 400 InvalidRequest with these messages; acceptance spec "image rendering contract").
 */
import { StorageError } from '../errors.js';

export const imageErrors = {
  invalidSource: () =>
    new StorageError(
      'InvalidRequest',
      400,
      'InvalidRequest',
      'The source image is invalid or unsupported for rendering',
    ),
  resolutionTooBig: () =>
    new StorageError(
      'InvalidRequest',
      400,
      'InvalidRequest',
      'The source image resolution is too large to process',
    ),
  fileTooBig: () =>
    new StorageError(
      'InvalidRequest',
      400,
      'InvalidRequest',
      'The source image file is too large to process',
    ),
  busy: () => new StorageError('SlowDown', 429, 'SlowDown', 'Too many requests', 429),
  disabled: () =>
    new StorageError(
      'FeatureNotEnabled',
      400,
      'FeatureNotEnabled',
      'The feature image transformation is not enabled for this resource',
    ),
};
