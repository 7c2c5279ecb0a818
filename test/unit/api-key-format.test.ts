import { expect } from 'chai';
import { API_KEY_PATTERN, checksum, generateApiKey, isWellFormedApiKey } from '../../shared/api-key-format.ts';

describe('API key format', () => {
  it('is svc_ + 30 base62 + a 6-character CRC-32 checksum in base62', () => {
    for (let i = 0; i < 200; i++) {
      const { key, keyPrefix } = generateApiKey();
      expect(key).to.match(/^svc_[0-9A-Za-z]{30}[0-9A-Za-z]{6}$/);
      expect(key).to.match(API_KEY_PATTERN);
      expect(keyPrefix).to.equal(key.slice(0, 12));
      expect(checksum(key.slice(4, 34))).to.equal(key.slice(34));
      expect(isWellFormedApiKey(key)).to.equal(true);
    }
  });

  it('computes the checksum as CRC-32 (IEEE) in base62, left-padded', () => {
    // CRC-32("123456789") = 0xCBF43926 (the standard check value) = base62 digits 3,45,35,27,22,14.
    expect(checksum('123456789')).to.equal('3jZRME');
    expect(3 * 62 ** 5 + 45 * 62 ** 4 + 35 * 62 ** 3 + 27 * 62 ** 2 + 22 * 62 + 14).to.equal(0xcbf43926);
    // A CRC that needs fewer than 6 digits is padded with 0: CRC-32("") = 0.
    expect(checksum('')).to.equal('000000');
  });

  it('rejects a key whose checksum or shape is wrong', () => {
    const { key } = generateApiKey();
    const flipped = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
    expect(isWellFormedApiKey(flipped)).to.equal(false);
    expect(isWellFormedApiKey(key.slice(0, -1))).to.equal(false);
    expect(isWellFormedApiKey(`sk_${key.slice(4)}`)).to.equal(false);
    expect(isWellFormedApiKey(`${key}0`)).to.equal(false);
  });
});
